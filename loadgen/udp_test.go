package loadgen_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol/udp"
	"loadgen/results"
	"loadgen/targets/udpecho"
)

func udpTarget(t *testing.T, dropEvery int) *udpecho.Server {
	t.Helper()
	srv, err := udpecho.New(udpecho.Config{Addr: "127.0.0.1:0", DropEvery: dropEvery})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func runUDP(t *testing.T, srv *udpecho.Server, mode udp.Mode, size int, cfg loadgen.Config) *results.Run {
	t.Helper()
	d, err := udp.NewDialer(udp.Config{Addr: srv.Addr(), Mode: mode, Size: size})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Target, cfg.Protocol, cfg.Threads = srv.Addr(), string(mode), 1
	r, err := loadgen.Run(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Datagrams == nil {
		t.Fatal("no datagram counts in the summary")
	}
	return r
}

// udp-rr's round trips, closed and open loop, are the target's echoes one
// for one, and none is lost on loopback.
func TestUDPRRCountsMatchTarget(t *testing.T) {
	const size = 512
	for _, open := range []bool{false, true} {
		t.Run(fmt.Sprintf("open=%v", open), func(t *testing.T) {
			srv := udpTarget(t, 0)
			cfg := conf(2, 0)
			cfg.Requests = 1000
			if open {
				cfg = conf(2, 300*time.Millisecond)
				cfg.Rate = 2000
			}
			r := runUDP(t, srv, udp.RR, size, cfg)
			s, g := r.Summary, *r.Summary.Datagrams
			if s.Requests == 0 || s.Errors.Total() != 0 {
				t.Fatalf("%d requests, errors %+v", s.Requests, s.Errors)
			}
			if !open && s.Requests != cfg.Requests {
				t.Errorf("%d round trips, asked %d", s.Requests, cfg.Requests)
			}
			if open && s.Uncorrected == nil {
				t.Error("open loop without the uncorrected latency")
			}
			if got := srv.Echoed(); got != uint64(s.Requests) {
				t.Errorf("target echoed %d datagrams, generator counted %d round trips", got, s.Requests)
			}
			if g.Sent != s.Requests || g.Received != s.Requests || g.Lost != 0 || g.ReceivedBytes != s.Requests*size {
				t.Errorf("datagrams %+v for %d round trips of %d bytes", g, s.Requests, size)
			}
			if s.BytesRead != s.Requests*size || s.BytesWritten != s.Requests*size {
				t.Errorf("%d bytes read, %d written for %d round trips of %d", s.BytesRead, s.BytesWritten, s.Requests, size)
			}
		})
	}
}

// A target that drops every 10th datagram: exactly those requests time
// out, and the summary counts them lost.
func TestUDPRRLossIsTheTargetsDrops(t *testing.T) {
	const every = 10
	srv := udpTarget(t, every)
	cfg := conf(1, 0)
	cfg.Requests = 200
	cfg.Timeout = results.Duration(50 * time.Millisecond)
	r := runUDP(t, srv, udp.RR, 64, cfg)
	s, g := r.Summary, *r.Summary.Datagrams
	dropped := int64(srv.Dropped())
	if dropped == 0 || dropped != g.Sent/every {
		t.Fatalf("target dropped %d of %d datagrams, want every %dth", dropped, g.Sent, every)
	}
	if g.Lost != dropped || s.Errors.Timeout != dropped || g.Received != g.Sent-dropped {
		t.Errorf("datagrams %+v, %d timeouts; the target dropped %d", g, s.Errors.Timeout, dropped)
	}
	if int64(srv.Echoed()) != s.Requests {
		t.Errorf("target echoed %d, generator counted %d round trips", srv.Echoed(), s.Requests)
	}
}

// udp-stream at a modest rate on loopback: the sink received every
// datagram sent, by its own count; with a sink that drops every 7th, the
// loss is what it dropped.
func TestUDPStreamReceiverCount(t *testing.T) {
	const size = 1000
	for _, every := range []int{0, 7} {
		t.Run(fmt.Sprintf("drop-every=%d", every), func(t *testing.T) {
			srv := udpTarget(t, every)
			cfg := conf(2, 300*time.Millisecond)
			cfg.Rate = 3000
			r := runUDP(t, srv, udp.Stream, size, cfg)
			s, g := r.Summary, *r.Summary.Datagrams
			if s.Requests == 0 || s.Errors.Total() != 0 {
				t.Fatalf("%d requests, errors %+v", s.Requests, s.Errors)
			}
			if g.Sent != s.Requests || g.Unknown != 0 {
				t.Errorf("datagrams %+v for %d sent", g, s.Requests)
			}
			if int64(srv.Sunk()) != g.Received || int64(srv.SunkBytes()) != g.ReceivedBytes {
				t.Errorf("sink took %d datagrams (%d bytes), the summary says %d (%d)", srv.Sunk(), srv.SunkBytes(), g.Received, g.ReceivedBytes)
			}
			if want := int64(srv.Dropped()); g.Lost != want || g.Received+g.Lost != g.Sent {
				t.Errorf("datagrams %+v; the sink dropped %d", g, want)
			}
			if every > 0 && g.Lost != g.Sent/int64(every) {
				t.Errorf("lost %d of %d, want every %dth", g.Lost, g.Sent, every)
			}
			if g.ReceivedBytes != g.Received*size {
				t.Errorf("%d bytes received in %d datagrams of %d", g.ReceivedBytes, g.Received, size)
			}
		})
	}
}
