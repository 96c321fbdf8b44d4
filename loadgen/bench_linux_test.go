package loadgen

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// benchPacers are the two loops the benchmarks compare: closed, and open
// at a rate no connection keeps up with, so no request waits for its time
// and every one goes through the paced path.
var benchPacers = []struct {
	name  string
	pacer pace.Pacer
}{
	{"closed", nil},
	{"open", pace.Constant{PerSec: 1e9}},
}

// benchEngine is an engine of one connection and one thread, its clock
// started, as the allocation tests make it.
func benchEngine(p pace.Pacer) *engine {
	cfg := Config{Pacer: p}
	cfg.Connections, cfg.Threads, cfg.Duration = 1, 1, results.Duration(time.Hour)
	cfg.setDefaults()
	e := &engine{cfg: cfg, pacer: p, runCtx: context.Background(), begin: make(chan struct{})}
	e.shards = []*shard{newShard(p != nil, true)}
	e.counts = make([]counter, 1)
	e.start = time.Now()
	e.measure = e.start
	return e
}

// One request on the event loop over raw TCP against the in-process echo
// target, end to end: start it, wait, read, record. Compare ns/op before
// and after a change to the engine's hot path (-count 5 or more: the
// target shares the machine).
func BenchmarkLoopRR(b *testing.B) {
	d := rrDialer(b, echoServer(b).Addr())
	for _, bp := range benchPacers {
		b.Run(bp.name, func(b *testing.B) {
			e := benchEngine(bp.pacer)
			e.dialer = d
			drv, err := newLoops(e, loopDialer{sd: d})
			if err != nil {
				b.Fatal(err)
			}
			l := drv.(*loops).ls[0]
			defer l.closeFDs()
			c := l.conns[0]
			if l.prefetch(); c.fd < 0 {
				b.Fatal("not connected")
			}
			if bp.pacer != nil {
				l.idle = append(l.idle, c)
			} else {
				l.ready = append(l.ready, c)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				before := c.count.n.Load()
				now := time.Now()
				if bp.pacer == nil {
					l.startReady(now)
				} else {
					l.dispatch(now)
				}
				for c.count.n.Load() == before {
					n, _ := unix.EpollWait(l.epfd, l.evs, 1000)
					if n == 0 {
						b.Fatalf("no answer in 1 s (errors %d)", l.shard.errors())
					}
					now := time.Now()
					for i := range n {
						l.event(&l.evs[i], now)
					}
				}
			}
		})
	}
}

// Ending one answered request on the event loop — its rules applied,
// recorded, its connection handed back — without the socket: the part of
// the hot path the engine's rules are, measured apart from the network's
// noise.
func BenchmarkLoopComplete(b *testing.B) {
	d := rrDialer(b, "127.0.0.1:9") // never dialed
	for _, bp := range benchPacers {
		b.Run(bp.name, func(b *testing.B) {
			e := benchEngine(bp.pacer)
			e.dialer = d
			drv, err := newLoops(e, loopDialer{sd: d})
			if err != nil {
				b.Fatal(err)
			}
			l := drv.(*loops).ls[0]
			defer l.closeFDs()
			c := l.conns[0]
			l.soloOK = false
			o := protocol.Outcome{Bytes: 64, Written: 64}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now := time.Now()
				c.intended, c.first, c.sent, c.deadline = now, now, now, now.Add(time.Second)
				c.state = stReading
				l.inFlight++
				o.Done = false
				l.complete(c, &o, now.Add(50*time.Microsecond))
				l.ready, l.idle = l.ready[:0], l.idle[:0]
			}
			if c.count.n.Load() != int64(b.N) {
				b.Fatalf("%d recorded of %d", c.count.n.Load(), b.N)
			}
		})
	}
}

// One request on the goroutine driver (a worker's step) over raw TCP
// against the in-process echo target, end to end.
func BenchmarkStepRR(b *testing.B) {
	d := rrDialer(b, echoServer(b).Addr())
	for _, bp := range benchPacers {
		b.Run(bp.name, func(b *testing.B) {
			e := benchEngine(bp.pacer)
			e.dialer = d
			w := &worker{e: e, shard: e.shards[0], count: &e.counts[0]}
			if bp.pacer != nil {
				var err error
				if w.wait, err = newWaiter(); err != nil {
					b.Fatal(err)
				}
				defer w.wait.close()
			}
			defer w.dropConn()
			if !w.step() || w.conn == nil {
				b.Fatal("first step failed")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if !w.step() {
					b.Fatal("step failed")
				}
			}
		})
	}
}
