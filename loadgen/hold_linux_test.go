package loadgen

import (
	"context"
	"runtime"
	"testing"
	"time"

	"loadgen/internal/heldp"
	"loadgen/results"
)

// A run given one P above its Procs (as the CLI does for a loop run) holds
// its loop's P while it waits, counts what the target echoed, records its
// Procs (not the spare P) as its GOMAXPROCS and its allowed CPUs, and lets go
// of the P at its end. With GOMAXPROCS at Procs, it does not hold.
func TestRunHoldsItsPWithASpareOne(t *testing.T) {
	srv := echoServer(t)
	for _, tc := range []struct {
		gomaxprocs int
		hold       bool
	}{{2, true}, {1, false}} {
		d := rrDialer(t, srv.Addr())
		var held bool
		// Window is called once the loops run, before the load starts.
		cfg := Config{Procs: 1, Window: func(time.Time, time.Time) { held = heldp.Held() == 1 }}
		cfg.Connections, cfg.Threads, cfg.Duration = 2, 1, results.Duration(300*time.Millisecond)
		cfg.Protocol = "tcp-rr"
		if !SpareP(cfg, d) {
			t.Fatal("tcp-rr runs on event loops: SpareP must say so")
		}
		prev := runtime.GOMAXPROCS(tc.gomaxprocs)
		before := srv.Echoed()
		r, err := Run(context.Background(), cfg, d)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if held != tc.hold {
			t.Errorf("GOMAXPROCS %d, Procs 1: loop held its P %v, want %v", tc.gomaxprocs, held, tc.hold)
		}
		if heldp.Held() != 0 {
			t.Errorf("GOMAXPROCS %d: %d Ps still counted as held after the run", tc.gomaxprocs, heldp.Held())
		}
		s := r.Summary
		if s.Requests == 0 || s.Errors.Total() != 0 {
			t.Fatalf("GOMAXPROCS %d: %d requests, errors %+v", tc.gomaxprocs, s.Requests, s.Errors)
		}
		// The target counts an echo once its write returned: the loop may
		// have read the last one before.
		want := uint64(s.Requests) * 64
		for deadline := time.Now().Add(10 * time.Second); srv.Echoed()-before < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if got := srv.Echoed() - before; got < want {
			t.Errorf("GOMAXPROCS %d: target echoed %d bytes for %d round trips of 64", tc.gomaxprocs, got, s.Requests)
		}
		if r.Env.GOMAXPROCS != 1 || r.Generator.CPUs > 1 {
			t.Errorf("GOMAXPROCS %d: recorded GOMAXPROCS %d and allowed CPUs %v, want Procs (1) and at most 1", tc.gomaxprocs, r.Env.GOMAXPROCS, r.Generator.CPUs)
		}
	}
}
