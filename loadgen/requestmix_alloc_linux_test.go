package loadgen

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
	"loadgen/targets/tlscert"
)

// fixedHTTP1 is an HTTP/1.1 server that answers every request of a mix
// of GETs and HEADs (no request bodies) with a canned answer, a HEAD's
// without its body, and allocates nothing per request: what an
// allocation test counts is the client's.
func fixedHTTP1(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const get, head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
	var wg sync.WaitGroup
	var conns sync.Map
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				in, out := make([]byte, 64<<10), make([]byte, 0, 64<<10)
				start, isHead, ends := true, false, 0 // at a request's first byte; a HEAD; of "\r\n\r\n" matched
				for {
					n, err := c.Read(in)
					if err != nil {
						return
					}
					out = out[:0]
					for _, b := range in[:n] {
						if start {
							isHead, start = b == 'H', false
						}
						switch {
						case b == "\r\n\r\n"[ends]:
							ends++
						case b == '\r':
							ends = 1
						default:
							ends = 0
						}
						if ends == 4 {
							ends, start = 0, true
							if isHead {
								out = append(out, head...)
							} else {
								out = append(out, get...)
							}
						}
					}
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		wg.Wait()
	})
	return ln.Addr().String()
}

// testMix is the mix of the allocation tests: three requests of weights
// 1, 2 and 3.
func testMix(t *testing.T, e *engine) {
	t.Helper()
	var err error
	if e.mix, err = newMix(&Mix{Weights: []int{1, 2, 3}, Names: []string{"a", "b", "c"}}, e.shards, &pickConn{}, nil, 1); err != nil {
		t.Fatal(err)
	}
}

// checkMixCounts checks that every name of the mix had its requests counted,
// in proportion to its weight (to a round).
func checkMixCounts(t *testing.T, m *mixState) {
	t.Helper()
	var answered [3]int64
	for n := range answered {
		for c := range m.copies {
			answered[n] += m.stats[n*m.copies+c].answered
		}
	}
	total := answered[0] + answered[1] + answered[2]
	for n, w := range []int64{1, 2, 3} {
		if d := answered[n] - total*w/6; d > 6 || d < -6 {
			t.Errorf("names answered %v: not in the weights' proportions", answered)
			return
		}
	}
}

// A request mix costs nothing per request either, on the event loop: the
// pick, the protocol's switch to the request picked (HTTP/1.1's Session,
// HTTP/2's and HTTP/1.1-over-TLS's Mux), the statistics by name —
// closed and open loop.
func TestMixLoopAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	h1addr := "http://" + fixedHTTP1(t)
	h1reqs := []http1.Request{{URL: h1addr + "/a"}, {Method: "HEAD", URL: h1addr + "/b"}, {URL: h1addr + "/c", Headers: []string{"X: y"}}}
	h1, err := http1.NewDialer(http1.Config{URL: h1addr, Requests: h1reqs})
	if err != nil {
		t.Fatal(err)
	}
	canned := "http://" + h2peer.Canned(t, 100, nil)
	h2c := func(streams int) loopDialer {
		var reqs []h2.Request
		for _, r := range h1reqs {
			reqs = append(reqs, h2.Request{Method: r.Method, URL: canned + r.URL[len(h1addr):], Headers: r.Headers})
		}
		d, err := h2.NewDialer(h2.Config{URL: canned, Cleartext: true, Streams: streams, Requests: reqs})
		if err != nil {
			t.Fatal(err)
		}
		return loopDialer{md: d}
	}
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	cannedTLS := "https://" + h2peer.Canned(t, 100, &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{"h2"}})
	var h2tlsReqs []h2.Request
	for _, r := range h1reqs {
		h2tlsReqs = append(h2tlsReqs, h2.Request{Method: r.Method, URL: cannedTLS + r.URL[len(h1addr):], Headers: r.Headers})
	}
	h2tls, err := h2.NewDialer(h2.Config{URL: cannedTLS, TLS: protocol.TLS{Insecure: true}, Streams: 4, Requests: h2tlsReqs})
	if err != nil {
		t.Fatal(err)
	}
	h1srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100)) }))
	h1srv.StartTLS()
	defer h1srv.Close()
	var tlsReqs []http1.Request
	for _, r := range h1reqs {
		tlsReqs = append(tlsReqs, http1.Request{Method: r.Method, URL: h1srv.URL + r.URL[len(h1addr):], Headers: r.Headers})
	}
	h1tls, err := http1.NewDialer(http1.Config{URL: h1srv.URL, TLS: protocol.TLS{Insecure: true}, Requests: tlsReqs})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		d       loopDialer
		streams int
		pacer   pace.Pacer
		tls     bool
	}{
		{"http1/closed loop", loopDialer{sd: h1}, 1, nil, false},
		{"http1/open loop", loopDialer{sd: h1}, 1, pace.Constant{PerSec: 50000}, false},
		{"h2c/closed loop", h2c(1), 1, nil, false},
		{"h2c/open loop", h2c(1), 1, pace.Constant{PerSec: 50000}, false},
		{"h2c m4/closed loop", h2c(4), 4, nil, false},
		{"http1 over TLS/closed loop", loopDialer{md: h1tls}, 1, nil, true},
		{"h2 over TLS m4/closed loop", loopDialer{md: h2tls}, 4, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pacer: tc.pacer}
			cfg.Connections, cfg.Threads, cfg.Duration, cfg.Streams = 1, 1, results.Duration(time.Hour), tc.streams
			cfg.setDefaults()
			e := &engine{cfg: cfg, pacer: tc.pacer, runCtx: context.Background(), begin: make(chan struct{})}
			e.shards = []*shard{newShard(tc.pacer != nil, true)}
			e.counts = make([]counter, 1)
			testMix(t, e)
			drv, err := newLoops(e, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			l := drv.(*loops).ls[0]
			defer l.closeFDs()
			c := l.conns[0]
			if tc.d.md != nil {
				l.muxPrefetch()
				if s := l.groups[0].cur; s == nil || s.state != msReady {
					t.Fatal("not connected")
				}
			} else if l.prefetch(); c.fd < 0 {
				t.Fatal("not connected")
			}
			e.start = time.Now()
			e.measure = e.start
			one := func() {
				before := c.count.n.Load()
				now := time.Now()
				if tc.pacer == nil {
					l.startReady(now)
				} else {
					l.dispatch(now)
				}
				l.flushDirty(now)
				stuck := now.Add(5 * time.Second)
				for c.count.n.Load() == before {
					if time.Now().After(stuck) {
						t.Fatalf("no answer counted in 5 s (errors %d)", l.shard.errors())
					}
					n, _ := unix.EpollWait(l.epfd, l.evs, 1000)
					now := time.Now()
					for i := 0; i < n; i++ {
						l.event(&l.evs[i], now)
					}
					if tc.pacer != nil {
						l.dispatch(now)
					}
					l.startReady(now)
					l.flushDirty(now)
				}
			}
			if tc.pacer != nil {
				l.idle = append(l.idle, l.conns...)
			} else {
				l.ready = append(l.ready, l.conns...)
			}
			one()
			defer checkMixCounts(t, e.mix)
			if tc.tls {
				const n = 2000
				reads, other, where := loopAllocs(n, one)
				if other != 0 {
					t.Errorf("%d allocations in %d requests on the loop, besides crypto/tls's record reads; at %s", other, n, where)
				}
				if reads > n+n/50 {
					t.Errorf("%d allocations in crypto/tls in %d requests: more than one per record read", reads, n)
				}
				return
			}
			if n := allocs.Count(2000, one); n > allocs.Slack {
				t.Errorf("%d allocations in 2000 requests, want 0", n)
			}
			if e.shards[0].errors() != 0 {
				t.Errorf("%d requests failed", e.shards[0].errors())
			}
		})
	}
}

// And on goroutines: a worker's step with a mix — HTTP/1.1's and
// HTTP/2's Conns — allocates nothing.
func TestMixStepAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	h1addr := "http://" + fixedHTTP1(t)
	h1, err := http1.NewDialer(http1.Config{URL: h1addr, Requests: []http1.Request{{URL: h1addr + "/a"}, {Method: "HEAD", URL: h1addr + "/b"}, {URL: h1addr + "/c"}}})
	if err != nil {
		t.Fatal(err)
	}
	canned := "http://" + h2peer.Canned(t, 100, nil)
	h2d, err := h2.NewDialer(h2.Config{URL: canned, Cleartext: true, Requests: []h2.Request{{URL: canned + "/a"}, {Method: "HEAD", URL: canned + "/b"}, {Method: "POST", URL: canned + "/c", Body: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		d     protocol.Dialer
		pacer pace.Pacer
	}{
		{"http1/closed loop", h1, nil},
		{"http1/open loop", h1, pace.Constant{PerSec: 20000}},
		{"h2c/closed loop", h2d, nil},
		{"h2c/open loop", h2d, pace.Constant{PerSec: 20000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pacer: tc.pacer}
			cfg.Connections, cfg.Threads, cfg.Duration = 1, 1, results.Duration(time.Hour)
			cfg.setDefaults()
			e := &engine{cfg: cfg, dialer: tc.d, pacer: tc.pacer, runCtx: context.Background()}
			e.start = time.Now()
			e.measure = e.start
			e.counts = make([]counter, 1)
			e.shards = []*shard{newShard(tc.pacer != nil, true)}
			testMix(t, e)
			w := &worker{e: e, shard: e.shards[0], count: &e.counts[0], dialer: e.dialer}
			if tc.pacer != nil {
				var err error
				if w.wait, err = newWaiter(); err != nil {
					t.Fatal(err)
				}
				defer w.wait.close()
			}
			defer w.dropConn()
			if !w.step() || w.conn == nil {
				t.Fatal("first step failed")
			}
			if n := allocs.Count(2000, func() {
				if !w.step() {
					t.Fatal("step failed")
				}
			}); n > allocs.Slack {
				t.Errorf("%d allocations in 2000 requests, want 0", n)
			}
			if n := w.count.n.Load(); n < 2000 || w.shard.errors() != 0 {
				t.Errorf("%d requests recorded, %d failed", n, w.shard.errors())
			}
			checkMixCounts(t, e.mix)
		})
	}
}

// A step of a mix on two hosts allocates nothing either: a worker of
// each host takes its host's requests (its claim and pick) only.
func TestMixHostsStepAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	a, b := "http://"+fixedHTTP1(t), "http://"+fixedHTTP1(t)
	da, err := http1.NewDialer(http1.Config{URL: a, Requests: []http1.Request{{URL: a + "/a"}, {Method: "HEAD", URL: a + "/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := http1.NewDialer(http1.Config{URL: b, Requests: []http1.Request{{URL: b + "/c"}}})
	if err != nil {
		t.Fatal(err)
	}
	hd, err := protocol.NewHosts([]string{a, b}, []protocol.Dialer{da, db})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		host  int32
		pacer pace.Pacer
	}{
		{"first host/closed loop", 0, nil},
		{"second host/closed loop", 1, nil},
		{"first host/open loop", 0, pace.Constant{PerSec: 20000}},
		{"second host/open loop", 1, pace.Constant{PerSec: 20000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pacer: tc.pacer}
			cfg.Connections, cfg.Threads, cfg.Duration = 2, 1, results.Duration(time.Hour)
			cfg.setDefaults()
			e := &engine{cfg: cfg, dialer: hd, pacer: tc.pacer, runCtx: context.Background()}
			e.start = time.Now()
			e.measure = e.start
			e.counts = make([]counter, 1)
			e.shards = []*shard{newShard(tc.pacer != nil, true)}
			if e.mix, err = newMix(&Mix{Weights: []int{1, 2, 3}, Names: []string{"a", "b", "c"}, Hosts: []int{0, 0, 1}}, e.shards, &pickConn{}, hd, 2); err != nil {
				t.Fatal(err)
			}
			w := &worker{e: e, shard: e.shards[0], count: &e.counts[0], host: tc.host, dialer: hd.Host(int(tc.host))}
			if tc.pacer != nil {
				if w.wait, err = newWaiter(); err != nil {
					t.Fatal(err)
				}
				defer w.wait.close()
			}
			defer w.dropConn()
			if !w.step() || w.conn == nil {
				t.Fatal("first step failed")
			}
			if n := allocs.Count(2000, func() {
				if !w.step() {
					t.Fatal("step failed")
				}
			}); n > allocs.Slack {
				t.Errorf("%d allocations in 2000 requests, want 0", n)
			}
			if n := w.count.n.Load(); n < 2000 || w.shard.errors() != 0 {
				t.Errorf("%d requests recorded, %d failed", n, w.shard.errors())
			}
			var run results.Run
			e.mix.result(&run)
			for _, nr := range run.RequestsByName {
				mine := (nr.Name == "c") == (tc.host == 1)
				if mine != (nr.Requests > 0) {
					t.Errorf("host %d's worker sent %d of %s", tc.host+1, nr.Requests, nr.Name)
				}
			}
		})
	}
}
