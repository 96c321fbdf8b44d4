package rpc

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/results"
	"loadgen/targets/grpcecho"
)

// Unary calls through the engine on both drivers, against the grpc-go
// target: the event loop drives plaintext calls itself (their streams
// sharing the connection's socket), goroutines a stream each.
func runCalls(t *testing.T, drv string, cfg Config, lc loadgen.Config) results.Summary {
	t.Helper()
	d := newDialer(t, cfg)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams = cfg.Target, "grpc", drv, cfg.Streams
	lc.Threads = 1
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Driver != drv {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, drv)
	}
	return r.Summary
}

// Every call answered is one the server made, none failed, on -c
// connections.
func TestEngineCalls(t *testing.T) {
	for _, drv := range []string{loadgen.DriverLoop, loadgen.DriverGoroutines} {
		t.Run(drv, func(t *testing.T) {
			srv := startEcho(t, grpcecho.Config{})
			var lc loadgen.Config
			lc.Connections, lc.Duration = 2, results.Duration(500*time.Millisecond)
			s := runCalls(t, drv, Config{Target: srv.Addr(), Streams: 4}, lc)
			if s.Requests < 100 || uint64(s.Requests) != srv.Calls() || s.Errors.Total() != 0 {
				t.Fatalf("%d calls answered, the server made %d, errors %+v", s.Requests, srv.Calls(), s.Errors)
			}
			if s.Connections.Established != 2 {
				t.Errorf("%d connections established, want 2", s.Connections.Established)
			}
			if s.BytesRead == 0 || s.BytesWritten == 0 {
				t.Errorf("bytes read %d, written %d", s.BytesRead, s.BytesWritten)
			}
		})
	}
}

// Calls slower than the timeout are timeouts, counted at it; the server
// sees them cancelled (their streams reset) and stops working on them.
func TestEngineCallTimeouts(t *testing.T) {
	for _, drv := range []string{loadgen.DriverLoop, loadgen.DriverGoroutines} {
		t.Run(drv, func(t *testing.T) {
			srv := startEcho(t, grpcecho.Config{Delay: time.Second})
			var lc loadgen.Config
			lc.Connections, lc.Duration, lc.Timeout = 1, results.Duration(500*time.Millisecond), results.Duration(50*time.Millisecond)
			s := runCalls(t, drv, Config{Target: srv.Addr(), Streams: 2}, lc)
			if s.Requests != 0 || s.Errors.Timeout < 10 || s.Errors.Total() != s.Errors.Timeout {
				t.Fatalf("%d answered, errors %+v: want timeouts only", s.Requests, s.Errors)
			}
			if mx := s.Latency.Max.D(); mx < 50*time.Millisecond || mx > 60*time.Millisecond {
				t.Errorf("max %v: a timeout is counted at the 50 ms timeout", mx)
			}
			// A call the server finishes is counted once its 1 s delay is
			// over; a cancelled one never is.
			time.Sleep(1200 * time.Millisecond)
			if n := srv.Calls(); n != 0 {
				t.Errorf("the server finished %d of the timed-out calls: they must be cancelled", n)
			}
		})
	}
}
