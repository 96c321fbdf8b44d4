package loadgen_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
	"loadgen/targets/tcpecho"
)

// echoTarget is loadgen's TCP echo target, in process, closed when the
// test ends.
func echoTarget(t *testing.T) *tcpecho.Server {
	t.Helper()
	srv, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// runCRR runs tcp-crr against addr on the driver of the moment.
func runCRR(t *testing.T, addr string, c int, newConn bool) results.Summary {
	t.Helper()
	return runCRRConfig(t, addr, c, newConn, 0)
}

// runCRRTimeout runs tcp-crr for 1 s with a request timeout.
func runCRRTimeout(t *testing.T, addr string, c int, timeout time.Duration) results.Summary {
	t.Helper()
	return runCRRConfig(t, addr, c, false, timeout)
}

func runCRRConfig(t *testing.T, addr string, c int, newConn bool, timeout time.Duration) results.Summary {
	t.Helper()
	d, err := tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.CRR, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	cfg := conf(c, 500*time.Millisecond)
	if timeout > 0 {
		cfg.Duration, cfg.Timeout = results.Duration(time.Second), results.Duration(timeout)
	}
	cfg.Target, cfg.Protocol, cfg.Threads, cfg.Driver, cfg.NewConn = addr, string(tcp.CRR), 1, driver, newConn
	r, err := loadgen.Run(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Driver != driver {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, driver)
	}
	return r.Summary
}

// tcp-crr connects inside every request. Its connection line must say so
// on either driver: one connect per request, measured in the window, and
// the connect histogram made of those connects, a part of each request's
// latency. Before, goroutines counted the Dial that made the Conn — which
// opens nothing — as the connect: a p50 of 1 µs, one per worker.
func TestCRRConnectsAreCounted(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		for _, newConn := range []bool{false, true} {
			t.Run(fmt.Sprintf("new-conn=%v", newConn), func(t *testing.T) {
				const c = 2
				s := runCRR(t, echoTarget(t).Addr(), c, newConn)
				if s.Requests < 100 || s.Errors.Total() != 0 {
					t.Fatalf("%d requests, errors %+v", s.Requests, s.Errors)
				}
				conns := s.Connections
				if conns.Measured < s.Requests-c || conns.Measured > s.Requests+c || conns.Failed != 0 {
					t.Errorf("connections %+v for %d requests: want one connect per request", conns, s.Requests)
				}
				// No warm-up: what was opened is what the window opened
				// (the preflight, which only checked the target, is not one).
				if conns.Established != conns.Measured {
					t.Errorf("connections %+v: %d established, %d measured, with no warm-up", conns, conns.Established, conns.Measured)
				}
				if s.Connect == nil || s.Connect.Count < s.Requests-c || s.Connect.Count > s.Requests+c {
					t.Fatalf("connect histogram %+v for %d requests: it must hold every request's connect", s.Connect, s.Requests)
				}
				// The connect is part of the request: never more, and not
				// a negligible part (a no-op Dial was 1 % of it).
				if p, lat := s.Connect.P50.D(), s.Latency.P50.D(); p > lat || p < lat/20 {
					t.Errorf("connect p50 %v, request p50 %v: not the request's own connect", p, lat)
				}
			})
		}
	})
}

// Against a target that died, every tcp-crr request fails to connect: each
// is a failed connection and a connect error, on either driver. Before,
// goroutines reported 0 failed beside thousands of connect errors.
func TestCRRFailedConnectsAreCounted(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		const c = 2
		s := runCRR(t, dyingTarget(t), c, false)
		conns := s.Connections
		if s.Errors.Connect < 10 || s.Requests != 0 {
			t.Fatalf("%d answered, errors %+v: want only connect errors", s.Requests, s.Errors)
		}
		if d := conns.Failed - s.Errors.Connect; d < -c || d > c {
			t.Errorf("%d failed connections for %d connect errors: each request's failed connect is both", conns.Failed, s.Errors.Connect)
		}
		if conns.Measured != 0 || s.Connect != nil && s.Connect.Count > 1 {
			t.Errorf("connections %+v, connect histogram %+v: nothing connected in the window", conns, s.Connect)
		}
	})
}
