//go:build unix

package listening

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start reads the address from the target's Line among its other lines,
// stops a target that gave none in time (or when ctx ends), and kills one
// that outlives its SIGINT by the grace.
func TestStart(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	const line = `echo "tcp echo/sink listening on 127.0.0.1:9000; Ctrl-C to stop"`
	for _, tc := range []struct {
		name     string
		script   string
		cancel   bool
		addr     string
		err      string
		stopSlow bool // the target ignores SIGINT: killed after the grace
	}{
		{"the line after others", `echo starting; echo "each request first calls http://127.0.0.1:8082"; ` + line + `; exec sleep 60`, false, "127.0.0.1:9000", "", false},
		{"a second line", line + `; ` + line + `; echo more; exec sleep 60`, false, "127.0.0.1:9000", "", false},
		{"no line in time", `echo starting; exec sleep 60`, false, "", "did not start within 200ms", false},
		{"gone without a line", `echo failed >&2; exit 1`, false, "", "did not start within 200ms", false},
		{"ctx ends first", `exec sleep 60`, true, "", "context canceled", false},
		{"deaf to SIGINT", `trap "" INT; ` + line + `; exec sleep 60`, false, "127.0.0.1:9000", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			cmd := exec.Command("sh", "-c", tc.script)
			addr, stop, err := start(ctx, cmd, io.Discard, 200*time.Millisecond, 100*time.Millisecond)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || stop != nil {
					t.Fatalf("error %v (stop %v), want %q", err, stop != nil, tc.err)
				}
				if cmd.ProcessState == nil {
					t.Error("the target still runs")
				}
				return
			}
			if err != nil || addr != tc.addr {
				t.Fatalf("addr %q, %v; want %q", addr, err, tc.addr)
			}
			began := time.Now()
			stop()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case !tc.stopSlow && (!ws.Signaled() || ws.Signal() != syscall.SIGINT):
				t.Errorf("stopped by %v, want SIGINT", cmd.ProcessState)
			case tc.stopSlow && (!ws.Signaled() || ws.Signal() != syscall.SIGKILL || time.Since(began) < 100*time.Millisecond):
				t.Errorf("stopped by %v after %v, want SIGKILL after the grace", cmd.ProcessState, time.Since(began))
			}
		})
	}
	if ReadyWithin != 10*time.Second || StopGrace != 5*time.Second {
		t.Errorf("ReadyWithin %v, StopGrace %v: loadgen's children have 10s to listen and 5s to stop", ReadyWithin, StopGrace)
	}
}
