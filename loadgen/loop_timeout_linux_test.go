package loadgen

import (
	"context"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
)

// slowAccept is a TCP target on loopback that never answers and, for a
// while, accepts nothing: on a listen backlog of 1 the kernel then drops
// the SYNs past the two its queue holds, and those connects wait for the
// SYN's retransmission, a second later. It accepts the first connection,
// then none for pause, then every one.
func slowAccept(t *testing.T, pause time.Duration) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "slow-accept")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(io.Discard, c) // never answers; returns at the client's close
				c.Close()
			}()
			if n == 0 {
				time.Sleep(pause)
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// A request whose connect was slow times out at its deadline, counted
// from the connect's start, and so does every other: the event loop keeps
// what is in flight by deadline, not in the order it was sent. (A request
// that connected slowly went in behind those sent meanwhile, whose later
// deadlines held its timeout back by up to its connect's time: here a
// second, a SYN's retransmission.)
//
// An open loop sends 25 requests a second, each on its own connection
// (tcp-crr), to a target that never answers and accepts nothing for
// 300 ms: the connects of that time wait a second for their SYN to be sent
// again, and their requests time out 300 ms later; meanwhile others
// connect at once. The loop is driven turn by turn (loop.turn, as run
// does), and after every turn nothing in flight may have a deadline before
// the time the turn handled: each timeout fires at the first turn past its
// deadline, and the list stays in deadline order. That is exact, however
// busy the machine (before, the list went out of order within the first
// 300 ms). How late that turn comes is the wait's: it rounds up to the
// millisecond, and the rest is scheduling, typically under a millisecond
// more; but on a busy two-core machine running other tests (a load of 15)
// a thread that waited has stayed off the CPU for up to 200 ms. So the
// median must be within medianBound, and every one within lateBound, half
// the second by which a slow connect held its timeout back before.
func TestLoopTimeoutsByDeadline(t *testing.T) {
	const (
		timeout     = 1300 * time.Millisecond
		medianBound = 5 * time.Millisecond
		lateBound   = 500 * time.Millisecond
	)
	for _, hold := range []bool{true, false} {
		name := "held P"
		if !hold {
			name = "runtime wait"
		}
		t.Run(name, func(t *testing.T) {
			addr := slowAccept(t, 300*time.Millisecond)
			d, err := tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.CRR, Size: 64})
			if err != nil {
				t.Fatal(err)
			}
			pacer := pace.Constant{PerSec: 25}
			cfg := Config{Pacer: pacer}
			cfg.Connections, cfg.Threads, cfg.Duration, cfg.Timeout = 64, 1, results.Duration(1200*time.Millisecond), results.Duration(timeout)
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
				t.Fatal("tcp-crr: want a connection per request")
			}
			l.holdP = hold // as run has it with a P to spare, or without
			e.start = time.Now()
			e.measure, e.end = e.start, e.start.Add(cfg.Duration.D())
			l.idle = append(l.idle, l.conns...)
			now := time.Now()
			l.dispatch(now)

			type flying struct {
				deadline   time.Time
				connecting bool
			}
			var late []time.Duration
			slow, sent := 0, 0
			stuck := e.end.Add(3 * timeout)
			for !l.finished() {
				if now.After(stuck) {
					t.Fatalf("%d requests still in flight %v after the end", l.inFlight, now.Sub(e.end))
				}
				before := map[*lconn]flying{}
				for c := l.flightHead; c != nil; c = c.next {
					before[c] = flying{c.deadline, c.state == stConnecting}
				}
				var ok bool
				if now, ok = l.turn(now); !ok {
					t.Fatal("the loop could not wait")
				}
				if h := l.flightHead; h != nil && !h.deadline.After(now) {
					t.Errorf("turn at +%v: a request due at +%v is still in flight", now.Sub(e.start), h.deadline.Sub(e.start))
				}
				for c := l.flightHead; c != nil && c.next != nil; c = c.next {
					if c.next.deadline.Before(c.deadline) {
						t.Fatalf("turn at +%v: the flight list is out of deadline order", now.Sub(e.start))
					}
				}
				for c, f := range before {
					again := c.inList && c.deadline.Equal(f.deadline)
					switch {
					case again && f.connecting && c.state != stConnecting:
						sent++ // connected: its request went
						if now.Sub(c.connStart) > 900*time.Millisecond {
							slow++
						}
					case !again && now.Before(f.deadline):
						t.Errorf("turn at +%v: a request due at +%v ended before (the target never answers)", now.Sub(e.start), f.deadline.Sub(e.start))
					case !again:
						late = append(late, now.Sub(f.deadline))
					}
				}
			}
			sh := e.shards[0]
			if slow == 0 {
				t.Fatalf("no connect waited for a SYN's retransmission (%d sent, %d errors): the test did not test a slow connect", sent, sh.errors())
			}
			if sent < 25 || len(late) < sent || sh.errs[protocol.Timeout] != int64(sent) {
				t.Errorf("%d sent, %d ended at their deadline, %d timeouts counted: want every request sent (25 or more) timed out", sent, len(late), sh.errs[protocol.Timeout])
			}
			slices.Sort(late)
			t.Logf("%d timeouts (%d after a connect that waited a second): late by %v (median) to %v (max)", len(late), slow, late[len(late)/2], late[len(late)-1])
			if m := late[len(late)/2]; m > medianBound {
				t.Errorf("timeouts late by %v (median), want within %v", m, medianBound)
			}
			if m := late[len(late)-1]; m > lateBound {
				t.Errorf("a timeout late by %v, want every one within %v", m, lateBound)
			}
		})
	}
}
