package loadgen_test

import (
	"context"
	"net"
	"testing"
	"time"

	"loadgen/internal/race"
	"loadgen/internal/ratecheck"
	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
)

// dyingTarget accepts one connection (the engine's preflight), then closes
// it and its listener: from then on the port refuses, as a killed target's
// does.
func dyingTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		ln.Close()
		if err == nil {
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// goroutines' kept-alive protocols: each reconnects after a failed connect
// with a backoff that doubles up to its cap (1 s under WithLongBackoff,
// drawn in its upper half).
func dyingDialers(t *testing.T) map[string]func(addr string) protocol.Dialer {
	return map[string]func(string) protocol.Dialer{
		"http1": func(addr string) protocol.Dialer {
			d, err := http1.NewDialer(http1.Config{URL: "http://" + addr + "/"})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		"tcp-rr": func(addr string) protocol.Dialer {
			d, err := tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.RR, Size: 64})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
}

// Against a target that died, the goroutines' reconnect backoff (10 ms
// doubling to 1 s, each wait drawn in its upper half: by the window's end
// every worker waits out a backoff of 320 ms to 1 s) must not carry a 1 s
// run past its window: the run ends on time and its duration, which
// divides Requests/sec, is the window. Before, the last backoff was slept
// out: hundreds of milliseconds late.
func TestGoroutinesBackoffEndsWithTheWindow(t *testing.T) {
	const window = time.Second
	defer loadgen.WithLongBackoff()() // 4 connections alone cap it at 50 ms
	for name, dialer := range dyingDialers(t) {
		t.Run(name, func(t *testing.T) {
			addr := dyingTarget(t)
			cfg := conf(4, window)
			cfg.Target, cfg.Threads, cfg.Driver = addr, 1, loadgen.DriverGoroutines
			cfg.Timeout = results.Duration(500 * time.Millisecond)
			var measure, end time.Time
			cfg.Window = func(from, to time.Time) { measure, end = from, to }
			probe := ratecheck.StartProbe()
			r, err := loadgen.Run(context.Background(), cfg, dialer(addr))
			if err != nil {
				t.Fatal(err)
			}
			returned := time.Now()
			stalled := probe.Stop()
			s := r.Summary
			if s.Connections.Failed == 0 {
				t.Fatalf("no connect failed (%+v): the target did not die", s.Connections)
			}
			if r.Interrupted {
				t.Error("interrupted: nothing interrupted it")
			}
			// The run's own ending takes a few milliseconds, more when a
			// busy machine held this process (the probe's independent
			// figure); a backoff slept out is hundreds of milliseconds.
			const margin = 150 * time.Millisecond
			if late := returned.Sub(end); late > margin+stalled {
				t.Errorf("the run returned %v after its window ended (the machine stalled this process %v): a backoff outlasted it", late, stalled)
			}
			if d := s.Duration.D(); d < window || d > window+margin+stalled || end.Sub(measure) != window {
				t.Errorf("duration %v for a %v window: Requests/sec is divided by it", d, window)
			}
		})
	}
}

// An interrupt (Ctrl-C) stops a goroutines run at once, whatever its
// workers wait for: cancelled 700 ms in, when every worker is in its 640 ms
// backoff, the run returns within a few milliseconds, not when the
// backoff ends.
func TestGoroutinesBackoffEndsOnInterrupt(t *testing.T) {
	defer loadgen.WithLongBackoff()() // 4 connections alone cap it at 50 ms
	for name, dialer := range dyingDialers(t) {
		t.Run(name, func(t *testing.T) {
			addr := dyingTarget(t)
			cfg := conf(4, time.Minute)
			cfg.Target, cfg.Threads, cfg.Driver = addr, 1, loadgen.DriverGoroutines
			cfg.Timeout = results.Duration(500 * time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled time.Time
			cfg.Window = func(from, _ time.Time) {
				time.AfterFunc(time.Until(from.Add(700*time.Millisecond)), func() {
					cancelled = time.Now()
					cancel()
				})
			}
			r, err := loadgen.Run(ctx, cfg, dialer(addr))
			if err != nil {
				t.Fatal(err)
			}
			returned := time.Now()
			if !r.Interrupted {
				t.Fatal("not marked interrupted")
			}
			if r.Summary.Connections.Failed == 0 {
				t.Fatalf("no connect failed (%+v): the target did not die", r.Summary.Connections)
			}
			// The backoff has over 500 ms left when the interrupt comes;
			// under -race on a busy machine the run's own ending can take
			// more than the 100 ms allowed otherwise.
			margin := 100 * time.Millisecond
			if race.Enabled {
				margin = 300 * time.Millisecond
			}
			if late := returned.Sub(cancelled); late > margin {
				t.Errorf("the run returned %v after the interrupt: a backoff was slept out", late)
			}
		})
	}
}
