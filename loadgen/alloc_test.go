package loadgen

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
	"loadgen/targets/tcpecho"
)

// echoServer is the in-process echo target, closed when the test ends.
func echoServer(t testing.TB) *tcpecho.Server {
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

// rrDialer dials addr for 64-byte TCP_RR round trips.
func rrDialer(t testing.TB, addr string) *tcp.Dialer {
	t.Helper()
	d, err := tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.RR, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// One request through the engine's hot path — take the next request, wait
// for its time (open loop), execute it, record it — allocates nothing.
// Raw TCP RR against the in-process echo target: neither side allocates per
// message, so what is counted is the engine's.
func TestStepAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	d := rrDialer(t, echoServer(t).Addr())
	for _, tc := range []struct {
		name  string
		pacer pace.Pacer
	}{
		{"closed loop", nil},
		{"open loop", pace.Constant{PerSec: 20000}}, // ahead of schedule: steps wait
		{"open loop poisson", poissonPacer(20000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pacer: tc.pacer}
			cfg.Connections, cfg.Threads, cfg.Duration = 1, 1, results.Duration(time.Hour)
			cfg.setDefaults()
			e := &engine{cfg: cfg, dialer: d, pacer: tc.pacer, runCtx: context.Background()}
			e.start = time.Now()
			e.measure = e.start
			e.counts = make([]counter, 1)
			w := &worker{e: e, shard: newShard(tc.pacer != nil, true), count: &e.counts[0], dialer: e.dialer}
			if tc.pacer != nil {
				var err error
				if w.wait, err = newWaiter(); err != nil {
					t.Fatal(err)
				}
				defer w.wait.close()
			}
			defer w.dropConn()
			if !w.step() || w.conn == nil { // dials
				t.Fatal("first step failed")
			}
			if n := allocs.Count(2000, func() {
				if !w.step() {
					t.Fatal("step failed")
				}
			}); n > allocs.Slack {
				t.Errorf("%d allocations in 2000 requests, want 0", n)
			}
			if n := w.count.n.Load(); n < 2000 {
				t.Errorf("%d requests recorded", n)
			}
		})
	}
}

// Recording a request costs the same on one processor and on two, when
// as many workers record at once as there are processors: workers record
// into shards, and with shardsPerProc shards per processor two of them
// rarely share a lock. Compare ns/op across -cpu 1,2 (and 0 allocs/op).
func BenchmarkRecord(b *testing.B) {
	for _, open := range []bool{false, true} {
		name := "closed"
		if open {
			name = "open"
		}
		b.Run(name, func(b *testing.B) {
			shards := make([]*shard, shardsPerProc*runtime.GOMAXPROCS(0))
			for i := range shards {
				shards[i] = newShard(open, true)
			}
			var next atomic.Int64
			o := protocol.Outcome{Status: 200, Bytes: 100, Written: 40}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				sh := shards[int(next.Add(1)-1)%len(shards)] // a worker's shard
				lat := 90 * time.Microsecond
				for pb.Next() {
					sh.response(&o, time.Time{}, lat, lat)
					lat += time.Microsecond
					if lat > time.Millisecond {
						lat = 90 * time.Microsecond
					}
				}
			})
		})
	}
}

// The Req/Sec statistics keep fixed memory and agree with a direct
// computation.
func TestSpreadAcc(t *testing.T) {
	var a spreadAcc
	xs := []float64{10, 12, 9, 11, 30, 10, 8, 12}
	for _, x := range xs {
		a.add(x)
	}
	s := a.spread()
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if d := s.Mean - mean; d > 1e-9 || d < -1e-9 || s.Max != 30 || s.Samples != 8 {
		t.Errorf("spread %+v, mean want %v", s, mean)
	}
	if s.WithinStdDev != 87.5 { // all but 30 lie within 12.75 ± 6.9
		t.Errorf("within stdev %v%%, want 87.5%%", s.WithinStdDev)
	}
	for i := 0; i < 3*reservoirSize; i++ {
		a.add(float64(i % 100))
	}
	if len(a.res) != reservoirSize {
		t.Errorf("reservoir grew to %d", len(a.res))
	}
}

// poissonPacer is rate/s on Poisson arrivals, a fixed seed.
func poissonPacer(rate float64) pace.Pacer {
	p, err := pace.WithArrival(pace.Constant{PerSec: rate}, pace.Poisson, 0, 1)
	if err != nil {
		panic(err)
	}
	return p
}

// jitterPacer is rate/s, each gap varied by up to ±50%.
func jitterPacer(rate float64) pace.Pacer {
	p, err := pace.WithArrival(pace.Constant{PerSec: rate}, pace.Uniform, 0.5, 1)
	if err != nil {
		panic(err)
	}
	return p
}
