package loadgen

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
)

// Open loop with a connection per request (tcp-crr, --new-conn) on the
// event loop, a request's lag is how late its connect started, as on
// goroutines: the connect is the request's first part, not lateness.
// Before, the loop took the lag once connected, so a slow connect made a
// request late, and a request whose connect failed counted no lag. The
// loop's clock is given (begin, connected, expire take now): the connect
// "takes" 5 ms and the timeout passes without waiting for either.
func TestLoopLagOfAConnectPerRequest(t *testing.T) {
	srv := echoServer(t)
	const startedLate = 300 * time.Microsecond // under LateAfter
	const connecting = 5 * time.Millisecond    // over it
	for _, tc := range []struct {
		name     string
		mode     tcp.Mode
		newConn  bool
		connects bool // false: the timeout passes while it connects
		late     time.Duration
	}{
		{"tcp-crr connected", tcp.CRR, false, true, startedLate},
		{"--new-conn connected", tcp.RR, true, true, startedLate},
		{"tcp-crr connect timed out", tcp.CRR, false, false, 3 * time.Millisecond},
		{"--new-conn connect timed out", tcp.RR, true, false, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tcp.NewDialer(tcp.Config{Addr: srv.Addr(), Mode: tc.mode, Size: 64})
			if err != nil {
				t.Fatal(err)
			}
			pacer := pace.Constant{PerSec: 100}
			cfg := Config{Pacer: pacer}
			cfg.Connections, cfg.Threads, cfg.Duration, cfg.NewConn = 1, 1, results.Duration(time.Hour), tc.newConn
			cfg.setDefaults()
			e := &engine{cfg: cfg, pacer: pacer, runCtx: context.Background(), begin: make(chan struct{})}
			e.shards = []*shard{newShard(true, false)}
			e.counts = make([]counter, 1)
			drv, err := newLoops(e, loopDialer{sd: d})
			if err != nil {
				t.Fatal(err)
			}
			l := drv.(*loops).ls[0]
			defer l.closeFDs()
			if !l.newConn {
				t.Fatal("want a connection per request")
			}
			c := l.conns[0]
			t0 := time.Now().Add(-2 * connecting) // the loop's given clock, in the past: the answer comes within its timeout
			e.start, e.measure = t0.Add(-time.Second), t0.Add(-time.Second)
			c.intended, c.first, c.pick = t0.Add(-tc.late), time.Time{}, -1
			l.begin(c, t0)
			if c.state != stConnecting {
				t.Fatalf("state %d, want connecting", c.state)
			}
			sh := l.shard
			if !tc.connects {
				l.expire(t0.Add(cfg.Timeout.D() + time.Millisecond))
				if sh.errs[protocol.Connect] != 1 || sh.failed.Count() != 1 {
					t.Fatalf("%d connect errors, %d failed; want the request failed by its connect", sh.errs[protocol.Connect], sh.failed.Count())
				}
			} else {
				// Writable: connected (the state waited for, not a time).
				for c.state == stConnecting {
					n, err := unix.EpollWait(l.epfd, l.evs, 5000)
					if err != nil && err != unix.EINTR {
						t.Fatal(err)
					}
					if n == 0 {
						t.Fatal("not connected in 5 s")
					}
					for i := range n {
						if l.evs[i].Pad == int32(c.index) {
							l.connected(c, t0.Add(connecting))
						}
					}
				}
				for sh.sent == 0 {
					n, err := unix.EpollWait(l.epfd, l.evs, 5000)
					if err != nil && err != unix.EINTR {
						t.Fatal(err)
					}
					if n == 0 {
						t.Fatalf("no answer in 5 s (errors %d)", sh.errors())
					}
					for i := range n {
						l.event(&l.evs[i], time.Now())
					}
				}
				if sh.succeeded.Count() != 1 {
					t.Fatalf("%d answered, %d errors: want the request answered", sh.succeeded.Count(), sh.errors())
				}
			}
			wantLate := int64(0)
			if tc.late > results.LateAfter {
				wantLate = 1
			}
			if sh.sent != 1 || sh.maxLag != tc.late || sh.late != wantLate {
				t.Errorf("paced: %d sent, lag %v, %d late; want 1 sent, its connect %v late (%d late)", sh.sent, sh.maxLag, sh.late, tc.late, wantLate)
			}
		})
	}
}
