package loadgen

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/rpc"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
	"loadgen/targets/tlscert"

	"golang.org/x/sys/unix"
)

// The event loop's hot path — start the next request, wait, read, parse,
// record — allocates nothing either, for raw TCP, h2c (one stream per
// connection and four), h2 and HTTP/1.1 over TLS, gRPC unary calls and
// ping-pong streams, closed and open loop, and a solo connection's
// blocking reads. (HTTP/1.1's Session is measured in its package.)
func TestLoopAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	rr := loopDialer{sd: rrDialer(t, echoServer(t).Addr())}
	canned := h2peer.Canned(t, 100, nil)
	h2c := func(streams int) loopDialer {
		d, err := h2.NewDialer(h2.Config{URL: "http://" + canned + "/", Cleartext: true, Streams: streams})
		if err != nil {
			t.Fatal(err)
		}
		return loopDialer{md: d}
	}
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	cannedTLS := h2peer.Canned(t, 100, &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{"h2"}})
	h2tls, err := h2.NewDialer(h2.Config{URL: "https://" + cannedTLS + "/", TLS: protocol.TLS{Insecure: true}, Streams: 4})
	if err != nil {
		t.Fatal(err)
	}
	h1srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100)) }))
	h1srv.StartTLS()
	defer h1srv.Close()
	h1tls, err := http1.NewDialer(http1.Config{URL: h1srv.URL, TLS: protocol.TLS{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	// A request with fields renders into its connection's buffer, made
	// at its first request: none per request after that.
	feed, err := protocol.ParseFeed("users.csv", []byte("user\nada\nbob\n"))
	if err != nil {
		t.Fatal(err)
	}
	h1fields, err := http1.NewDialer(http1.Config{URL: h1srv.URL + "/u/{{seq}}?r={{rand 100}}", Method: "POST", Feed: feed,
		Headers: []string{"X-Id: {{uuid}}"}, Body: []byte(`{"user":"{{row.user}}","at":{{now}}}`), TLS: protocol.TLS{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	h2cFields, err := h2.NewDialer(h2.Config{URL: "http://" + canned + "/u/{{seq}}?r={{rand 100}}", Cleartext: true, Streams: 4, Feed: feed,
		Headers: []string{"X-Id: {{uuid}}", "X-User: {{row.user}}"}, Method: "POST", Body: []byte(`{"seq":{{seq}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	grpcCanned := h2peer.CannedGRPC(t)
	grpc, err := rpc.NewDialer(rpc.Config{Target: grpcCanned, Health: true, Streams: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Ping-pong streams: the echo target's reply to a 100-byte body.
	pingPong := h2peer.CannedPingPong(t, append([]byte{0x0a, 100}, make([]byte, 100)...))
	grpcStream, err := rpc.NewDialer(rpc.Config{Target: pingPong, Mode: rpc.Stream, Size: 100, Streams: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		d       loopDialer
		streams int
		pacer   pace.Pacer
		tls     bool
		solo    bool
	}{
		{"tcp-rr/closed loop", rr, 1, nil, false, false},
		{"tcp-rr/solo", rr, 1, nil, false, true},
		{"tcp-rr/open loop", rr, 1, pace.Constant{PerSec: 50000}, false, false},
		{"tcp-rr/open loop poisson", rr, 1, poissonPacer(50000), false, false},
		{"tcp-rr/open loop jitter", rr, 1, jitterPacer(50000), false, false},
		{"h2c/closed loop", h2c(1), 1, nil, false, false},
		{"h2c/open loop", h2c(1), 1, pace.Constant{PerSec: 50000}, false, false},
		{"h2c m4/closed loop", h2c(4), 4, nil, false, false},
		{"h2c fields m4/closed loop", loopDialer{md: h2cFields}, 4, nil, false, false},
		{"h2 over TLS m4/closed loop", loopDialer{md: h2tls}, 4, nil, true, false},
		{"http1 over TLS/closed loop", loopDialer{md: h1tls}, 1, nil, true, false},
		{"http1 fields over TLS/closed loop", loopDialer{md: h1fields}, 1, nil, true, false},
		{"grpc m4/closed loop", loopDialer{md: grpc}, 4, nil, false, false},
		{"grpc-stream m4/closed loop", loopDialer{md: grpcStream}, 4, nil, false, false},
		{"grpc-stream m4/open loop", loopDialer{md: grpcStream}, 4, pace.Constant{PerSec: 50000}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pacer: tc.pacer}
			cfg.Connections, cfg.Threads, cfg.Duration, cfg.Streams = 1, 1, results.Duration(time.Hour), tc.streams
			cfg.setDefaults()
			e := &engine{cfg: cfg, pacer: tc.pacer, runCtx: context.Background(), begin: make(chan struct{})}
			e.shards = []*shard{newShard(tc.pacer != nil, true)}
			e.counts = make([]counter, 1)
			drv, err := newLoops(e, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			l := drv.(*loops).ls[0]
			defer l.closeFDs()
			c := l.conns[0]
			l.holdP, l.soloOK = tc.solo, tc.solo // as run decides for one connection
			solos := 0
			if tc.d.md != nil {
				l.muxPrefetch()
				if s := l.groups[0].cur; s == nil || s.state != msReady {
					t.Fatal("not connected")
				}
			} else if l.prefetch(); c.fd < 0 {
				t.Fatal("not connected")
			}
			if l.solo != nil {
				t.Fatal("a connection went solo before a request of its ended")
			}
			e.start = time.Now()
			e.measure = e.start
			one := func() {
				before := c.count.n.Load()
				now := time.Now()
				if tc.pacer == nil {
					l.startReady(now) // c is ready: its last request ended
				} else {
					l.dispatch(now)
				}
				l.flushDirty(now)
				stuck := now.Add(5 * time.Second) // a request that fails never counts: do not spin
				for c.count.n.Load() == before {
					if time.Now().After(stuck) {
						t.Fatalf("no answer counted in 5 s (errors %d)", l.shard.errors())
					}
					if l.solo == c && c.state == stReading && l.readSolo(c) {
						solos++
						continue
					}
					n, _ := unix.EpollWait(l.epfd, l.evs, 1000)
					now := time.Now()
					for i := 0; i < n; i++ {
						l.event(&l.evs[i], now)
					}
					if tc.pacer != nil {
						l.dispatch(now)
					}
					l.startReady(now) // m4: the other streams go on
					l.flushDirty(now)
				}
			}
			if tc.pacer != nil {
				l.idle = append(l.idle, l.conns...)
			} else {
				l.ready = append(l.ready, l.conns...)
			}
			one() // grows what grows once
			if tc.solo {
				if l.solo != c {
					t.Fatal("one connection, closed loop, kept P, a request done: want it solo")
				}
				if fl, err := unix.FcntlInt(uintptr(c.fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
					t.Fatalf("a solo connection's socket must block (flags %#x, %v)", fl, err)
				}
			}
			if tc.tls {
				// The server's crypto/tls, in this process, allocates
				// too: count the loop's own, by where they are made.
				const n = 2000
				reads, other, where := loopAllocs(n, one)
				if other != 0 {
					t.Errorf("%d allocations in %d requests on the loop, besides crypto/tls's record reads; at %s", other, n, where)
				}
				if reads > n+n/50 {
					t.Errorf("%d allocations in crypto/tls in %d requests: more than one per record read", reads, n)
				}
				t.Logf("crypto/tls: %.3f allocations per request", float64(reads)/n)
				return
			}
			count := allocs.Count
			if tc.solo {
				// Count runs on one P, which the solo read would keep
				// from the in-process target: count on two.
				if runtime.GOMAXPROCS(0) < 2 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
				}
				count = allocs.CountOnEveryP
			}
			const n = 2000
			if all := count(n, one); all > allocs.Slack {
				// The count is the process's: the in-process peer's and
				// the runtime's allocations count too (32 once in a
				// loaded CI run). Count the loop's own, by where each
				// was made, over as many requests again: none.
				reads, other, where := loopAllocs(n, one)
				if own := reads + other; own != 0 {
					t.Errorf("%d allocations in %d requests on the loop (%d in the process), want 0; at %s", own, n, all, where)
				} else {
					t.Logf("%d allocations in the process over %d requests, none of them the loop's", all, n)
				}
			}
			if tc.solo && solos < 1900 {
				t.Errorf("%d of 2000 answers read blocking, want (nearly) all", solos)
			}
		})
	}
}

// loopAllocs runs f n times and counts the allocations made through the
// loop's code, from the memory profile at its finest: those of crypto/tls
// (an atLeastReader for every record it reads — it cannot be fed bytes
// without one — and its buffer pools refilled after a collection), and
// the others, with where the first of them was made.
func loopAllocs(n int, f func()) (tlsReads, other int64, where string) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for range 200 { // the next sample is set at the old rate
		f()
	}
	before := memProfile()
	for range n {
		f()
	}
	for stk, count := range memProfile() {
		d := count - before[stk]
		if d <= 0 {
			continue
		}
		onLoop, inServer, inTLS, top := false, false, false, ""
		frames := runtime.CallersFrames(stk[:])
		for {
			fr, more := frames.Next()
			if top == "" && !strings.HasPrefix(fr.Function, "runtime.") {
				top = fmt.Sprintf("%s (%s:%d)", fr.Function, fr.File, fr.Line)
			}
			onLoop = onLoop || strings.HasPrefix(fr.Function, "loadgen/loadgen.(*loop).")
			inServer = inServer || strings.HasPrefix(fr.Function, "loadgen/loadgen/protocol/h2conn/h2peer.") || strings.HasPrefix(fr.Function, "net/http.")
			inTLS = inTLS || strings.HasPrefix(fr.Function, "crypto/tls.")
			if !more {
				break
			}
		}
		// A stack cut at its 32 frames may have lost the loop's: count it
		// unless it is the server's.
		onLoop = onLoop || (stk[len(stk)-1] != 0 && !inServer)
		switch {
		case !onLoop:
		case inTLS:
			tlsReads += d
		default:
			if other == 0 {
				where = top
			}
			other += d
		}
	}
	return tlsReads, other, where
}

// memProfile is the allocations made so far, by stack.
func memProfile() map[[32]uintptr]int64 {
	runtime.GC() // the profile is what the last two cycles published
	runtime.GC()
	n, _ := runtime.MemProfile(nil, true)
	for {
		rs := make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(rs, true); ok {
			m := make(map[[32]uintptr]int64, n)
			for _, r := range rs[:n] {
				m[r.Stack0] += r.AllocObjects
			}
			return m
		}
	}
}

// The event loop keeps a few hundred bytes per connection: no goroutine,
// no buffer of its own (the loop's read buffer is shared), a Session.
func TestLoopMemoryPerConnection(t *testing.T) {
	const n = 10000
	d, err := tcp.NewDialer(tcp.Config{Addr: "127.0.0.1:9", Mode: tcp.RR, Size: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.Connections, cfg.Threads, cfg.Duration = n, 2, results.Duration(time.Second)
	cfg.setDefaults()
	e := &engine{cfg: cfg, dialer: d, runCtx: context.Background(), begin: make(chan struct{})}
	e.counts = make([]counter, cfg.Threads)
	e.shards = []*shard{newShard(false, false), newShard(false, false)}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	drv, err := newLoops(e, loopDialer{sd: d})
	if err != nil {
		t.Fatal(err)
	}
	per := float64(heap()-before) / n
	drv.(*loops).closeFDs()
	t.Logf("%.0f bytes per connection", per)
	if per > 512 {
		t.Errorf("%.0f bytes of heap per connection, want < 512", per)
	}
}
