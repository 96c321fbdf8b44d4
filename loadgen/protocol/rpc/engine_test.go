package rpc

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/targets/grpcecho"
	"loadgen/targets/tlscert"
)

// Unary calls through the engine on both drivers, plaintext and over
// TLS, against the grpc-go target: the event loop drives the calls itself
// (their streams sharing the connection's socket; over TLS, the
// connection opened in a goroutine, then its records through memory),
// goroutines a stream each.

// variant is a driver and a transport.
type variant struct {
	driver string
	tls    bool
}

var engineVariants = []variant{
	{loadgen.DriverLoop, false}, {loadgen.DriverGoroutines, false},
	{loadgen.DriverLoop, true}, {loadgen.DriverGoroutines, true},
}

func (v variant) String() string {
	if v.tls {
		return "tls/" + v.driver
	}
	return "plaintext/" + v.driver
}

// echo starts the grpc-go target, over TLS for v.tls.
func (v variant) echo(t *testing.T, cfg grpcecho.Config) *grpcecho.Server {
	if v.tls {
		cert, err := tlscert.New(tlscert.ECDSAP256)
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	}
	return startEcho(t, cfg)
}

func runCalls(t *testing.T, v variant, cfg Config, lc loadgen.Config) results.Summary {
	t.Helper()
	if v.tls {
		cfg.TLS = protocol.TLS{Enabled: true, Insecure: true}
	}
	d := newDialer(t, cfg)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams = cfg.Target, "grpc", v.driver, cfg.Streams
	lc.Threads = 1
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Driver != v.driver {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, v.driver)
	}
	return r.Summary
}

// Every call answered is one the server made, none failed, on -c
// connections.
func TestEngineCalls(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			srv := v.echo(t, grpcecho.Config{})
			var lc loadgen.Config
			lc.Connections, lc.Duration = 2, results.Duration(500*time.Millisecond)
			s := runCalls(t, v, Config{Target: srv.Addr(), Streams: 4}, lc)
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

// Calls and ping-pong messages slower than the timeout are timeouts,
// counted at it; the server sees them cancelled (their streams reset) and
// stops working on them. A ping-pong slot's next message goes on a new
// stream.
func TestEngineCallTimeouts(t *testing.T) {
	for _, mode := range []Mode{Unary, Stream} {
		for _, v := range engineVariants {
			t.Run(string(mode)+"/"+v.String(), func(t *testing.T) {
				srv := v.echo(t, grpcecho.Config{Delay: time.Second})
				var lc loadgen.Config
				lc.Connections, lc.Duration, lc.Timeout = 1, results.Duration(500*time.Millisecond), results.Duration(50*time.Millisecond)
				s := runCalls(t, v, Config{Target: srv.Addr(), Mode: mode, Streams: 2}, lc)
				if s.Requests != 0 || s.Errors.Timeout < 10 || s.Errors.Total() != s.Errors.Timeout {
					t.Fatalf("%d answered, errors %+v: want timeouts only", s.Requests, s.Errors)
				}
				if mx := s.Latency.Max.D(); mx < 50*time.Millisecond || mx > 60*time.Millisecond {
					t.Errorf("max %v: a timeout is counted at the 50 ms timeout", mx)
				}
				if mode == Stream {
					// One stream per timed-out message; the server learns
					// of each in its own time.
					for end := time.Now().Add(2 * time.Second); srv.Streams() < uint64(s.Errors.Timeout) && time.Now().Before(end); {
						time.Sleep(10 * time.Millisecond)
					}
					if n := srv.Streams(); n < uint64(s.Errors.Timeout) {
						t.Errorf("the server saw %d streams for %d timed-out messages: each must go on a new stream", n, s.Errors.Timeout)
					}
				}
				// A call or message the server finishes is counted once its
				// 1 s delay is over; a cancelled one never is.
				time.Sleep(1200 * time.Millisecond)
				if n := srv.Calls() + srv.Messages(); n != 0 {
					t.Errorf("the server finished %d of the timed-out calls or messages: they must be cancelled", n)
				}
			})
		}
	}
}
