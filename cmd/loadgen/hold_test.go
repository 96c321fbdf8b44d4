package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/results/store"
)

// waitFor waits until cond holds, checking it every few milliseconds, and
// fails the test if it has not after a minute (a command stuck).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// --prometheus-hold says on stderr that it holds the figures, where and
// for how long; what it serves then is the run's final figures (the rate
// its own, not 0; every error class, at 0); Ctrl-C ends the wait, leaving
// the run's exit status.
func TestPrometheusHoldSaysItWaits(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, _, errb := startCLI(ctx, "run", "-q", "-n", "200", "-c", "1", "-t", "1", "--json", jsonPath,
		"--prometheus", "127.0.0.1:0", "--prometheus-hold", "1h", url)
	re := regexp.MustCompile(`loadgen: --prometheus-hold: serving the final figures on (http://\S+/metrics) for 1h0m0s \(Ctrl-C ends it\)`)
	waitFor(t, "the hold's line on stderr", func() bool { return re.MatchString(errb.String()) })
	resp, err := http.Get(re.FindStringSubmatch(errb.String())[1])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	run, err := store.ReadRun(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^loadgen_rate_achieved (\S+)$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no loadgen_rate_achieved during the hold:\n%s", b)
	}
	if rate, err := strconv.ParseFloat(m[1], 64); err != nil || rate != run.Summary.RPS || rate == 0 {
		t.Errorf("loadgen_rate_achieved %s during the hold, want the run's %v", m[1], run.Summary.RPS)
	}
	if !strings.Contains(string(b), `loadgen_errors_total{class="timeout",path="",step=""} 0`) {
		t.Errorf("no timeout counter at 0:\n%s", b)
	}
	cancel()
	if code := waitExit(t, done, 10*time.Second); code != exitOK {
		t.Errorf("Ctrl-C during the hold: exit %d, want the run's own 0", code)
	}
}

// --ui-linger says on stderr that the dashboard stays, where and for how
// long; Ctrl-C ends the wait.
func TestUILingerSaysItWaits(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, _, errb := startCLI(ctx, "run", "-q", "-n", "20", "-c", "1", "-t", "1", "--ui", "127.0.0.1:0", "--ui-linger", "1h", url)
	re := regexp.MustCompile(`loadgen: --ui-linger: the dashboard stays on http://127\.0\.0\.1:\d+/ for 1h0m0s \(Ctrl-C ends it\)`)
	waitFor(t, "the linger's line on stderr", func() bool { return re.MatchString(errb.String()) })
	cancel()
	waitExit(t, done, 10*time.Second)
}

// Ctrl-C says how many requests in flight it discarded (docs/run.md's
// promise, under Counting), on stderr, as the run ends.
func TestInterruptSaysInFlightDiscarded(t *testing.T) {
	var waiting atomic.Int64
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		waiting.Add(1)
		select { // answered only when the test ends
		case <-release:
		case <-r.Context().Done():
		}
	})}
	ln := listen(t)
	go srv.Serve(ln)
	t.Cleanup(func() { close(release); srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, out, errb := startCLI(ctx, "run", "-q", "-c", "3", "-t", "1", "-d", "1m", "--timeout", "1m", "http://"+ln.Addr().String()+"/")
	waitFor(t, "3 requests at the server", func() bool { return waiting.Load() == 3 })
	cancel()
	if code := waitExit(t, done, 10*time.Second); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	if !strings.Contains(errb.String(), "loadgen: interrupted: 3 requests in flight were discarded (not counted)") {
		t.Errorf("stderr does not say how many requests in flight were discarded:\n%s\n%s", out, errb)
	}
}

// listen is a listener on a free loopback port, closed when the test ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
