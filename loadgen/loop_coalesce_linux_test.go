package loadgen_test

import (
	"testing"
	"time"

	"loadgen/internal/race"
	"loadgen/loadgen"
)

// A closed loop with 64 streams in flight on one h2c connection pauses
// before it waits (one wake-up for several answers), and the pause moves
// no latency: against a 10 ms delay p50 stays within what the server's own
// timer took, every request is counted as the server counts it, and RPS
// keeps Little's law (64 ÷ the mean latency) within 5%: a stream answered
// during a pause waits for its next request until the loop wakes (at most
// coalesceFor, 0.5% of the delay), as it waits while a busy loop ends the
// others (under -race, 6% of a 2 ms delay).
func TestLoopPausesKeepLatency(t *testing.T) {
	driver, h2c = loadgen.DriverLoop, true
	defer func() { driver, h2c = loadgen.DriverAuto, false }()
	srv := newServer(t, func(int64) time.Duration { return 10 * time.Millisecond })
	cfg := conf(1, time.Second)
	cfg.Streams = 64
	before := loadgen.LoopPauses()
	r := run(t, cfg, srv.URL)
	s := r.Summary
	if loadgen.LoopPauses() == before {
		t.Fatal("the loop never paused with 64 requests in flight")
	}
	if s.Requests == 0 || s.Requests != srv.served.Load() {
		t.Errorf("generator counted %d requests, server served %d", s.Requests, srv.served.Load())
	}
	slept, tol := srv.sleptP50(), 1500*time.Microsecond
	if race.Enabled {
		tol = 3 * time.Millisecond
	}
	if p50 := s.Latency.P50.D(); p50 < 10*time.Millisecond || p50 > max(11500*time.Microsecond, slept+tol) {
		t.Errorf("p50 %v, want 10–11.5 ms, or within %v of the server's own %v", p50, tol, slept)
	}
	want := 64 / s.Latency.Mean.D().Seconds()
	if dev := s.RPS/want - 1; dev < -0.05 || dev > 0.05 {
		t.Errorf("RPS %.1f, streams/mean latency %.1f: off by %.1f%%", s.RPS, want, 100*dev)
	}
}
