package loadgen_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol/tcp"
)

// netperf's three measurements through the engine, on both drivers,
// counted against what the target saw: tcp-rr's transactions are its
// echoes, tcp-crr opens a connection per transaction, tcp-stream's bytes
// are what the sink took.
func TestTCPModes(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		for _, mode := range []tcp.Mode{tcp.RR, tcp.CRR, tcp.Stream} {
			t.Run(string(mode), func(t *testing.T) {
				srv := echoTarget(t)
				const size = 1024
				d, err := tcp.NewDialer(tcp.Config{Addr: srv.Addr(), Mode: mode, Size: size})
				if err != nil {
					t.Fatal(err)
				}
				cfg := conf(2, 500*time.Millisecond)
				cfg.Target, cfg.Protocol, cfg.Threads, cfg.Driver = srv.Addr(), string(mode), 1, driver
				r, err := loadgen.Run(context.Background(), cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				if r.Config.Driver != driver {
					t.Fatalf("run by %q", r.Config.Driver)
				}
				s := r.Summary
				if s.Requests < 100 || s.Errors.Total() != 0 {
					t.Fatalf("%d requests, errors %+v", s.Requests, s.Errors)
				}
				if s.BytesWritten != s.Requests*size {
					t.Errorf("%d bytes written for %d requests of %d", s.BytesWritten, s.Requests, size)
				}
				switch mode {
				case tcp.RR:
					if s.BytesRead != s.Requests*size {
						t.Errorf("%d bytes read for %d transactions of %d", s.BytesRead, s.Requests, size)
					}
					// The target counts an echo once its write returned:
					// the generator may have read the last one before.
					eventually(t, fmt.Sprintf("the target to count the %d bytes the generator read", s.BytesRead), func() bool { return srv.Echoed() >= uint64(s.BytesRead) })
				case tcp.CRR:
					if c := s.Connections.Established; c < s.Requests {
						t.Errorf("%d connections opened for %d transactions", c, s.Requests)
					}
				case tcp.Stream:
					// The sink reads what is still in flight at the run's end.
					eventually(t, fmt.Sprintf("the sink to take the %d bytes the generator wrote", s.BytesWritten), func() bool { return srv.Sunk() >= uint64(s.BytesWritten) })
				}
			})
		}
	})
}

// A payload larger than both sides' socket buffers: the echo comes back
// while the request is still being written, and must be read meanwhile,
// or each side waits for the other to read (the loop then spun on a full
// send buffer until every request timed out).
func TestTCPRRLargerThanBuffers(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		srv := echoTarget(t)
		const size = 16 << 20
		d, err := tcp.NewDialer(tcp.Config{Addr: srv.Addr(), Mode: tcp.RR, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		cfg := conf(1, 500*time.Millisecond)
		cfg.Target, cfg.Protocol, cfg.Threads, cfg.Driver = srv.Addr(), string(tcp.RR), 1, driver
		r, err := loadgen.Run(context.Background(), cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Summary; s.Requests < 2 || s.Errors.Total() != 0 || s.BytesRead != s.Requests*size {
			t.Fatalf("%d transactions of 16 MiB, %d bytes read, errors %+v", s.Requests, s.BytesRead, s.Errors)
		}
	})
}
