//lint:file-ignore SA1019 x/net/http2's own client is the benchmark's reference

package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn/h2peer"
)

// cannedServer is h2peer.Canned: with useTLS, over TLS.
func cannedServer(t testing.TB, n int, useTLS bool) string {
	var cfg *tls.Config
	if useTLS {
		cfg = &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}, NextProtos: []string{"h2"}}
	}
	return h2peer.Canned(t, n, cfg)
}

func cannedConfig(t testing.TB, useTLS bool, streams int) Config {
	addr := cannedServer(t, 100, useTLS)
	if useTLS {
		return Config{URL: "https://" + addr + "/", TLS: protocol.TLS{Insecure: true}, Streams: streams}
	}
	return Config{URL: "http://" + addr + "/", Cleartext: true, Streams: streams}
}

// TestZeroAllocs checks that a request allocates nothing, on h2c and TLS,
// alone on its connection or sharing it.
func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	ok, err := protocol.ParseStatusSet("2xx")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tls     bool
		streams int
		body    []byte
		ok      protocol.StatusSet // --ok-status
		fields  bool               // a :path, headers and a body that vary: rendered into the connection's and the stream's buffers, none per request
	}{{false, 1, nil, protocol.StatusSet{}, false}, {true, 1, nil, protocol.StatusSet{}, false}, {false, 4, nil, protocol.StatusSet{}, false},
		{false, 1, make([]byte, 1000), protocol.StatusSet{}, false}, {false, 1, nil, ok, false}, {false, 4, nil, protocol.StatusSet{}, true}} {
		t.Run(fmt.Sprintf("tls=%v,streams=%d,body=%d,ok=%s,fields=%v", tc.tls, tc.streams, len(tc.body), tc.ok, tc.fields), func(t *testing.T) {
			cfg := cannedConfig(t, tc.tls, tc.streams)
			if tc.body != nil {
				cfg.Method, cfg.Body = "POST", tc.body
			}
			if tc.fields {
				feed, err := protocol.ParseFeed("users.csv", []byte("user\nada\nbob\n"))
				if err != nil {
					t.Fatal(err)
				}
				cfg.URL += "u/{{seq}}?r={{rand 100}}&at={{now}}"
				cfg.Headers, cfg.Feed = []string{"X-Id: {{uuid}}", "X-User: {{row.user}}"}, feed
				cfg.Method, cfg.Body = "POST", []byte(`{"seq":{{seq}},"user":"{{row.user}}"}`)
			}
			cfg.OKStatus = tc.ok
			d, err := NewDialer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var cs []protocol.Conn
			for i := 0; i < tc.streams; i++ {
				c, err := d.Dial(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				cs = append(cs, c)
			}
			// The other streams of the connection run alongside.
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, c := range cs[1:] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						c.Do(ctx, time.Now().Add(10*time.Second))
					}
				}()
			}
			defer wg.Wait()
			defer close(stop)
			c := cs[0]
			for i := 0; i < 100; i++ { // warm up: buffers grow, timers and context hooks are made
				c.Do(ctx, time.Now().Add(10*time.Second))
			}
			var failed protocol.Outcome
			n := allocs.Count(2000, func() {
				if o := c.Do(ctx, time.Now().Add(10*time.Second)); o.Err != protocol.None {
					failed = o
				}
			})
			if failed.Err != protocol.None {
				t.Fatalf("%+v", failed)
			}
			// crypto/tls allocates once per record it reads from the network
			// (an atLeastReader in readFromUntil, Go 1.26): one for the
			// client and one for the canned server here. None is ours.
			var want uint64
			if tc.tls {
				want = 2
			}
			if n > allocs.TLSReads(2000*want)+allocs.Slack {
				t.Errorf("%d allocations in 2000 requests, want at most %d each", n, want)
			}
		})
	}
}

// BenchmarkDo measures the client's cost per request against the canned
// server (whose cost is included: it is small) with parallel streams:
// -cpu sets GOMAXPROCS, streams per connection × connections = the number
// of goroutines calling Do. cpu-ns/op is the process's CPU time (user +
// system, client and server) per request.
func BenchmarkDo(b *testing.B) {
	for _, bc := range []struct {
		name           string
		tls            bool
		conns, streams int
	}{
		{"h2c-c1-m1", false, 1, 1},
		{"h2c-c8-m1", false, 8, 1},
		{"h2c-c4-m10", false, 4, 10},
		{"tls-c8-m1", true, 8, 1},
		{"tls-c4-m10", true, 4, 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d, err := NewDialer(cannedConfig(b, bc.tls, bc.streams))
			if err != nil {
				b.Fatal(err)
			}
			benchLoop(b, d, bc.conns*bc.streams)
		})
	}
}

// BenchmarkNetHTTPServer is BenchmarkDo against net/http's HTTP/2 server,
// whose cost dominates; for comparison with x/net's client below.
func BenchmarkNetHTTPServer(b *testing.B) {
	s := h2cServer(b, &recorder{}, false, true)
	d, err := NewDialer(Config{URL: s.URL + "/", Cleartext: true, Streams: 10})
	if err != nil {
		b.Fatal(err)
	}
	benchLoop(b, d, 40)
}

// benchLoop runs b.N requests over workers Conns, each driven by its own
// goroutine as the engine does.
func benchLoop(b *testing.B, d *Dialer, workers int) {
	ctx := context.Background()
	var cs []protocol.Conn
	for i := 0; i < workers; i++ {
		c, err := d.Dial(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		cs = append(cs, c)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	var wg sync.WaitGroup
	per := b.N / workers
	for i, c := range cs {
		n := per
		if i == 0 {
			n += b.N % workers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < n; j++ {
				if o := c.Do(ctx, time.Now().Add(10*time.Second)); o.Err != protocol.None {
					b.Errorf("%+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkXNetClientConn is option (a), x/net/http2's ClientConn over
// connections we dial ourselves, against the same canned server and with
// the same streams as BenchmarkDo/h2c-c4-m10: the reference this package's
// own client was measured against.
func BenchmarkXNetClientConn(b *testing.B) {
	const conns, streams = 4, 10
	addr := cannedServer(b, 100, false)
	tr := &http2.Transport{AllowHTTP: true}
	var ccs []*http2.ClientConn
	for i := 0; i < conns; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		cc, err := tr.NewClientConn(nc)
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		ccs = append(ccs, cc)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	var wg sync.WaitGroup
	workers := conns * streams
	for i := 0; i < workers; i++ {
		n := b.N / workers
		if i == 0 {
			n += b.N % workers
		}
		cc := ccs[i%conns]
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			for j := 0; j < n; j++ {
				resp, err := cc.RoundTrip(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}
