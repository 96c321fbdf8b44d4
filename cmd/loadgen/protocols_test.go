package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/internal/ratecheck"
	"loadgen/internal/testport"
	"loadgen/results"
	"loadgen/results/store"
	"loadgen/targets/tcpecho"
)

// Each protocol, driven by `loadgen run` through the engine, against its
// in-process target: what the generator counted is what the target served.
// runJSON runs `loadgen run` with args and returns its JSON result; a
// failed run or any error in it fails the test.
func runJSON(t *testing.T, args ...string) *results.Run {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := cli(t, append([]string{"run", "-q", "--json", out}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Errors.Total() != 0 {
		t.Errorf("errors: %+v (status %v)", r.Summary.Errors, r.Summary.Status)
	}
	return r
}

func TestProtocolCountsMatchTargets(t *testing.T) {
	g := startGRPCEcho(t)
	tc, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })

	run := func(t *testing.T, args ...string) (requests, written int64) {
		t.Helper()
		r := runJSON(t, args...)
		return r.Summary.Requests, r.Summary.BytesWritten
	}
	t.Run("grpc unary", func(t *testing.T) {
		before := g.Calls()
		n, _ := run(t, "-p", "grpc", "-c", "4", "-n", "500", "--size", "100", g.Addr())
		if n != 500 || g.Calls()-before != 500 {
			t.Errorf("generator %d calls, server %d", n, g.Calls()-before)
		}
	})
	t.Run("grpc ping-pong", func(t *testing.T) {
		before := g.Messages()
		n, _ := run(t, "-p", "grpc-stream", "-c", "2", "-n", "400", g.Addr())
		if n != 400 || g.Messages()-before != 400 {
			t.Errorf("generator %d messages, server %d", n, g.Messages()-before)
		}
	})
	t.Run("grpc c2 m10 opens 2 connections", func(t *testing.T) {
		// For a duration, not -n: with a request count, one connection's
		// streams may finish it before the other's first Dial.
		r := runJSON(t, "-p", "grpc", "-c", "2", "-m", "10", "-d", "300ms", g.Addr())
		if r.Summary.Connections.Established != 2 {
			t.Errorf("%d connections established, want 2", r.Summary.Connections.Established)
		}
	})
	hb := startHTTPBinServer(t)
	t.Run("h2c c2 m10", func(t *testing.T) {
		before := hb.Served()
		r := runJSON(t, "-p", "h2c", "-c", "2", "-m", "10", "-d", "300ms", "http://"+hb.Addr()+"/bytes/100")
		if r.Summary.Requests == 0 || hb.Served()-before != uint64(r.Summary.Requests) {
			t.Errorf("generator %d requests, httpbin served %d", r.Summary.Requests, hb.Served()-before)
		}
		if r.Summary.Connections.Established != 2 {
			t.Errorf("%d connections established, want 2 (2 × 10 streams)", r.Summary.Connections.Established)
		}
	})
	// The reference clients count the same on the same targets.
	t.Run("--client grpc-go and x-net", func(t *testing.T) {
		before := g.Calls()
		r := runJSON(t, "--client", "grpc-go", "-p", "grpc", "-c", "2", "-m", "5", "-d", "300ms", "--size", "100", g.Addr())
		if r.Summary.Requests == 0 || g.Calls()-before != uint64(r.Summary.Requests) || r.Summary.Connections.Established != 2 || r.Config.Client != "grpc-go" {
			t.Errorf("grpc-go: generator %d calls on %d connections, server %d, client %q", r.Summary.Requests, r.Summary.Connections.Established, g.Calls()-before, r.Config.Client)
		}
		before = g.Messages()
		r = runJSON(t, "--client", "grpc-go", "-p", "grpc-stream", "-c", "2", "-n", "200", g.Addr())
		if r.Summary.Requests != 200 || g.Messages()-before != 200 {
			t.Errorf("grpc-go ping-pong: generator %d messages, server %d", r.Summary.Requests, g.Messages()-before)
		}
		served := hb.Served()
		r = runJSON(t, "--client", "x-net", "-p", "h2c", "-c", "2", "-m", "10", "-d", "300ms", "http://"+hb.Addr()+"/bytes/100")
		if r.Summary.Requests == 0 || hb.Served()-served != uint64(r.Summary.Requests) || r.Summary.Connections.Established != 2 || r.Config.Client != "x-net" {
			t.Errorf("x-net: generator %d requests on %d connections, httpbin served %d", r.Summary.Requests, r.Summary.Connections.Established, hb.Served()-served)
		}
		for _, args := range [][]string{{"--client", "x-net", "-p", "grpc", g.Addr()}, {"--client", "grpc-go", "http://" + hb.Addr()}, {"--client", "curl", "http://" + hb.Addr()}} {
			if code, _, stderr := cli(t, append([]string{"run", "-n", "1"}, args...)...); code != 2 || !strings.Contains(stderr, "--client") {
				t.Errorf("run %v: exit %d, %s", args, code, stderr)
			}
		}
	})
	// Any method, as ghz calls it: types by reflection, the message from JSON.
	t.Run("--call", func(t *testing.T) {
		before := g.Calls()
		r := runJSON(t, "-p", "grpc", "--call", "loadgen.echo.v1.Echo/Unary", "--data", `{"body":"aGVsbG8=","responseSize":64}`, "-c", "2", "-n", "200", g.Addr())
		if r.Summary.Requests != 200 || g.Calls()-before != 200 || r.Config.Call != "/loadgen.echo.v1.Echo/Unary" {
			t.Errorf("--call: generator %d calls, server %d, call %q", r.Summary.Requests, g.Calls()-before, r.Config.Call)
		}
		data := filepath.Join(t.TempDir(), "req.json")
		os.WriteFile(data, []byte(`{"body":"aGk="}`), 0o644)
		before = g.Messages()
		r = runJSON(t, "--client", "grpc-go", "-p", "grpc-stream", "--call", "loadgen.echo.v1.Echo/PingPong", "--data", "@"+data, "-n", "100", g.Addr())
		if r.Summary.Requests != 100 || g.Messages()-before != 100 {
			t.Errorf("--call ping-pong: generator %d messages, server %d", r.Summary.Requests, g.Messages()-before)
		}
		for _, bad := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"-p", "grpc", "--call", "loadgen.echo.v1.Echo/Nope", g.Addr()}, 2, "has no method Nope"},
			{[]string{"-p", "grpc", "--call", "loadgen.echo.v1.Echo/Unary", "--data", `{"bogus":1}`, g.Addr()}, 2, "bogus"},
			{[]string{"-p", "grpc", "--data", "{}", g.Addr()}, 2, "--call"},
			{[]string{"-p", "tcp-rr", "--call", "a.B/C", tc.Addr()}, 2, "--call"},
			{[]string{"-p", "grpc", "--call", "a.B/C", testport.Closed(t)}, 1, "cannot connect"},
		} {
			if code, _, stderr := cli(t, append([]string{"run", "-n", "1"}, bad.args...)...); code != bad.code || !strings.Contains(stderr, bad.msg) {
				t.Errorf("run %v: exit %d, %s; want %d and %q", bad.args, code, stderr, bad.code, bad.msg)
			}
		}
	})
	// echoedSince is what tc echoed since before, once it reached want or
	// 10 s passed: tc counts an echo once its write returned, so the
	// generator may have read the last one before it is counted.
	echoedSince := func(before, want uint64) uint64 {
		for deadline := time.Now().Add(10 * time.Second); tc.Echoed()-before < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return tc.Echoed() - before
	}
	t.Run("tcp-rr", func(t *testing.T) {
		before := tc.Echoed()
		n, _ := run(t, "-p", "tcp-rr", "-c", "2", "-n", "300", "--size", "512", tc.Addr())
		if got := echoedSince(before, 300*512); n != 300 || got != 300*512 {
			t.Errorf("generator %d transactions, server echoed %d bytes (want %d)", n, got, 300*512)
		}
	})
	// Open loop works for every protocol: what was sent was served. At
	// 400/s for 1 s over 4 connections, a stall at the window's end (a busy
	// machine) leaves up to the intervals it spans unsent, within
	// ratecheck's bounds, as the engine's TestOpenLoopRate allows.
	openLoop := func(t *testing.T, what string, args ...string) int64 {
		t.Helper()
		probe := ratecheck.StartProbe()
		r := runJSON(t, append([]string{"-R", "400", "-d", "1s"}, args...)...)
		stalled := probe.Stop()
		p := r.Summary.Pacing
		if p == nil {
			t.Fatalf("%s: no pacing in an open-loop run", what)
		}
		lag, err := ratecheck.Short(p, 400, 0, stalled)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := r.Summary.Requests
		if n < 390-lag || n > 401 {
			t.Errorf("%s at 400/s for 1s: generator %d (the max lag %v accounts for %d fewer)", what, n, p.MaxLag.D(), lag)
		}
		return n
	}
	t.Run("open loop grpc and tcp-rr", func(t *testing.T) {
		before := g.Calls()
		n := openLoop(t, "grpc", "-p", "grpc", "-c", "4", g.Addr())
		if g.Calls()-before != uint64(n) {
			t.Errorf("grpc at 400/s for 1s: generator %d, server %d", n, g.Calls()-before)
		}
		echoed := tc.Echoed()
		n = openLoop(t, "tcp-rr", "-p", "tcp-rr", "-c", "4", "--size", "64", tc.Addr())
		if got := echoedSince(echoed, uint64(n)*64); got != uint64(n)*64 {
			t.Errorf("tcp-rr at 400/s for 1s: generator %d, server echoed %d bytes", n, got)
		}
	})
	t.Run("tcp-crr", func(t *testing.T) {
		before := tc.Accepted()
		n, _ := run(t, "-p", "tcp-crr", "-c", "2", "-n", "200", tc.Addr())
		// Each transaction is a connection; the dialer probes the target once.
		if got := tc.Accepted() - before; n != 200 || got != 201 {
			t.Errorf("generator %d transactions, server accepted %d connections (want 201)", n, got)
		}
	})
	t.Run("tcp-stream", func(t *testing.T) {
		before := tc.Sunk()
		_, written := run(t, "-p", "tcp-stream", "-c", "1", "-n", "1000", "--size", "4096", tc.Addr())
		deadline := time.Now().Add(5 * time.Second)
		for tc.Sunk()-before < uint64(written) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := tc.Sunk() - before; written != 1000*4096 || got != uint64(written) {
			t.Errorf("sent %d bytes, the sink received %d", written, got)
		}
	})
}
