package h2

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// recorder is a handler that answers ?status=C with a body of ?n=N bytes
// (default 200, 100 bytes) and records what it received.
type recorder struct {
	requests atomic.Int64
	mu       sync.Mutex
	method   string
	path     string
	body     int
	header   http.Header
	proto    string
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.requests.Add(1)
	h.mu.Lock()
	h.method, h.path, h.body, h.header, h.proto = r.Method, r.URL.RequestURI(), len(body), r.Header.Clone(), r.Proto
	if r.Host != "" {
		h.header.Set("Host", r.Host)
	}
	h.mu.Unlock()
	code, n := 200, 100
	if v, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
		code = v
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil {
		n = v
	}
	w.WriteHeader(code)
	w.Write([]byte(strings.Repeat("x", n)))
}

func dial(t testing.TB, cfg Config) (*Dialer, protocol.Conn) {
	t.Helper()
	d, c := lean.dial(t, cfg)
	return d.(*Dialer), c
}

func soon() time.Time { return time.Now().Add(10 * time.Second) }

func TestRequests(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		h := &recorder{}
		servers := map[string]func() (*testServer, Config){
			"h2c": func() (*testServer, Config) {
				s := h2cServer(t, h, false, true)
				return s, Config{URL: s.URL, Cleartext: true}
			},
			"h2-tls": func() (*testServer, Config) {
				s := tlsServer(t, h, "h2", "http/1.1")
				return s, Config{URL: s.URL, TLS: protocol.TLS{Insecure: true}}
			},
		}
		for name, start := range servers {
			t.Run(name, func(t *testing.T) {
				s, base := start()
				cases := []struct {
					name, method, query string
					body                []byte
					headers             []string
					status              int32
					err                 protocol.ErrClass
					n                   int
				}{
					{name: "GET", query: "/a/b?n=100", status: 200, n: 100},
					{name: "GET big", query: "/?n=200000", status: 200, n: 200000},
					{name: "POST", method: "POST", query: "/post?n=7", body: []byte(strings.Repeat("b", 1000)), status: 200, n: 7},
					{name: "POST 100k", method: "POST", query: "/post?n=7", body: []byte(strings.Repeat("b", 100_000)), status: 200, n: 7},
					{name: "POST big", method: "POST", query: "/", body: make([]byte, 300_000), status: 200, n: 100},
					{name: "404", query: "/?status=404&n=9", status: 404, err: protocol.Status, n: 9},
					{name: "503", query: "/?status=503", status: 503, err: protocol.Status, n: 100},
					{name: "headers", query: "/h", headers: []string{"X-Test: yes", "Host: example.test", "Connection: keep-alive", "User-Agent: ua/1"}, status: 200, n: 100},
				}
				const perConn = 3 // the first request inserts into the HPACK table, later ones refer to it
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						cfg := base
						cfg.URL += tc.query
						cfg.Method, cfg.Body, cfg.Headers = tc.method, tc.body, tc.headers
						_, c := cl.dial(t, cfg)
						before := h.requests.Load()
						for i := 0; i < perConn; i++ {
							o := c.Do(context.Background(), soon())
							if o.Status != tc.status || o.Err != tc.err || o.Done {
								t.Fatalf("request %d: %+v, want status %d err %v", i, o, tc.status, tc.err)
							}
							if cl.bodyBytes {
								if o.Bytes != int64(tc.n) || o.Written != int64(len(tc.body)) {
									t.Errorf("request %d: Bytes %d, Written %d: want the bodies, %d and %d", i, o.Bytes, o.Written, tc.n, len(tc.body))
								}
							} else {
								minBytes := int64(tc.n + 2*h2wire.FrameHeaderLen + 1)
								if o.Bytes < minBytes || o.Bytes > minBytes+int64(tc.n/1000+1)*h2wire.FrameHeaderLen+200 {
									t.Errorf("request %d: Bytes = %d, want about %d", i, o.Bytes, minBytes)
								}
								if o.Written < int64(h2wire.FrameHeaderLen+len(tc.body)) {
									t.Errorf("request %d: Written = %d, want more than %d", i, o.Written, h2wire.FrameHeaderLen+len(tc.body))
								}
							}
							h.mu.Lock()
							method, path, body, hdr, p := h.method, h.path, h.body, h.header, h.proto
							h.mu.Unlock()
							want := tc.method
							if want == "" {
								want = "GET"
							}
							if method != want || path != tc.query || body != len(tc.body) || p != "HTTP/2.0" {
								t.Fatalf("server saw %s %s %s with %d body bytes, want %s %s HTTP/2.0 with %d", method, path, p, body, want, tc.query, len(tc.body))
							}
							if tc.name == "headers" {
								if hdr.Get("X-Test") != "yes" || hdr.Get("Host") != "example.test" || hdr.Get("User-Agent") != "ua/1" {
									t.Fatalf("server saw headers %v", hdr)
								}
							} else if ua := hdr.Get("User-Agent"); ua != userAgent {
								t.Fatalf("user-agent %q", ua)
							}
							if ae := hdr.Get("Accept-Encoding"); ae != "" {
								t.Fatalf("accept-encoding %q sent unasked", ae)
							}
						}
						if n := h.requests.Load() - before; n != perConn {
							t.Errorf("server served %d requests, want %d", n, perConn)
						}
					})
				}
				if n := s.ln.accepted.Load(); n != int64(len(cases)) {
					t.Errorf("server accepted %d connections, want %d", n, len(cases))
				}
			})
		}
	})
}

// inFlight is a handler that answers once `want` requests are in flight at
// once on the same connection (or after a timeout, with 503).
type inFlight struct {
	want int
	mu   sync.Mutex
	cond *sync.Cond
	n    map[string]int // by connection (remote address)
	max  map[string]int
}

func (h *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.n[r.RemoteAddr]++
	h.max[r.RemoteAddr] = max(h.max[r.RemoteAddr], h.n[r.RemoteAddr])
	h.cond.Broadcast()
	deadline := time.Now().Add(10 * time.Second)
	t := time.AfterFunc(10*time.Second, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	for h.max[r.RemoteAddr] < h.want && time.Now().Before(deadline) {
		h.cond.Wait()
	}
	t.Stop()
	ok := h.max[r.RemoteAddr] >= h.want
	h.n[r.RemoteAddr]--
	h.mu.Unlock()
	if !ok {
		w.WriteHeader(503)
	}
}

func TestStreamsShareConnections(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		const conns, streams = 2, 10
		h := &inFlight{want: streams, n: map[string]int{}, max: map[string]int{}}
		h.cond = sync.NewCond(&h.mu)
		s := h2cServer(t, h, false, true)
		d := cl.dialer(t, Config{URL: s.URL, Cleartext: true, Streams: streams})
		cs := dialN(t, d, conns*streams)
		if got := d.Opened(); got != conns {
			t.Errorf("Opened() = %d, want %d", got, conns)
		}
		if got := s.ln.accepted.Load(); got != conns {
			t.Errorf("server accepted %d connections, want %d", got, conns)
		}
		for round := 0; round < 3; round++ {
			var wg sync.WaitGroup
			outcomes := make([]protocol.Outcome, len(cs))
			for i, c := range cs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outcomes[i] = c.Do(context.Background(), time.Now().Add(20*time.Second))
				}()
			}
			wg.Wait()
			for i, o := range outcomes {
				if o.Err != protocol.None || o.Status != 200 || o.Done {
					t.Fatalf("round %d, stream %d: %+v (503: the streams of a connection did not run concurrently)", round, i, o)
				}
			}
		}
		h.mu.Lock()
		if len(h.max) != conns {
			t.Errorf("requests came over %d connections, want %d", len(h.max), conns)
		}
		for addr, m := range h.max {
			if m != streams {
				t.Errorf("%s: at most %d requests in flight, want %d", addr, m, streams)
			}
		}
		h.mu.Unlock()
		if got := s.ln.accepted.Load(); got != conns {
			t.Errorf("server accepted %d connections, want %d", got, conns)
		}
		for _, c := range cs {
			c.Close()
		}
		eventually(t, "the server to see both connections closed", func() bool { return s.ln.open.Load() == 0 })
	})
}

func TestConcurrentDials(t *testing.T) {
	s := h2cServer(t, &recorder{}, false, true)
	d, err := NewDialer(Config{URL: s.URL, Cleartext: true, Streams: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Every Conn is dialed before any closes: a connection whose Conns all
	// closed early would be closed, and a later Dial would rightly open an
	// eleventh.
	var wg, dialed sync.WaitGroup
	var failed atomic.Int64
	dialed.Add(50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := d.Dial(context.Background())
			dialed.Done()
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			dialed.Wait()
			for j := 0; j < 20; j++ {
				if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Errorf("%d requests failed", failed.Load())
	}
	if d.Opened() != 10 || s.ln.accepted.Load() != 10 {
		t.Errorf("Opened() = %d, server accepted %d: want 10 each", d.Opened(), s.ln.accepted.Load())
	}
}

func TestCloseKeepsSharedConnection(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		s := h2cServer(t, &recorder{}, false, true)
		d := cl.dialer(t, Config{URL: s.URL, Cleartext: true, Streams: 3})
		cs := dialN(t, d, 3)
		for _, c := range cs {
			if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
				t.Fatal(o)
			}
		}
		cs[0].Close()
		cs[0].Close() // idempotent
		cs[1].Close()
		if o := cs[0].Do(context.Background(), soon()); !o.Done || o.Err == protocol.None {
			t.Errorf("Do after Close: %+v, want an error and Done", o)
		}
		for i := 0; i < 3; i++ {
			if o := cs[2].Do(context.Background(), soon()); o.Err != protocol.None || o.Done {
				t.Fatalf("the remaining stream: %+v", o)
			}
		}
		if s.ln.open.Load() != 1 {
			t.Fatalf("%d connections open, want 1", s.ln.open.Load())
		}
		cs[2].Close()
		eventually(t, "the server to see the connection closed", func() bool { return s.ln.open.Load() == 0 })
		if d.Opened() != 1 {
			t.Errorf("Opened() = %d, want 1", d.Opened())
		}
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestHTTP1OnlyServer(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		h := &recorder{}
		for _, tc := range []struct {
			name string
			cfg  func() Config
			want []string // in the error
		}{
			{"h2c", func() Config { return Config{URL: h2cServer(t, h, true, false).URL, Cleartext: true} }, []string{"HTTP/1", "h2c"}},
			{"tls", func() Config { return Config{URL: tlsServer(t, h, "http/1.1").URL, TLS: protocol.TLS{Insecure: true}} }, []string{"did not negotiate HTTP/2"}},
			{"tls without ALPN", func() Config { return Config{URL: tlsServer(t, h).URL, TLS: protocol.TLS{Insecure: true}} }, []string{"did not negotiate HTTP/2"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := cl.dialer(t, tc.cfg())
				_, err := d.Dial(context.Background())
				if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "-p http1") {
					t.Fatalf("Dial: %v, want a one-line error mentioning %q and -p http1", err, tc.want)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("Dial: %v, want a one-line error mentioning %q and -p http1", err, tc.want)
					}
				}
				if d.Opened() != 0 { // a connection that never spoke HTTP/2 is a failed Dial
					t.Errorf("Opened() = %d, want 0", d.Opened())
				}
			})
		}
	})
}

func TestTLSVerification(t *testing.T) {
	s := tlsServer(t, &recorder{}, "h2")
	eachClient(t, func(t *testing.T, cl client) {
		for _, tc := range []struct {
			name string
			tls  protocol.TLS
			want string // error text, "" for success
		}{
			{"default", protocol.TLS{}, "--insecure"},
			{"insecure", protocol.TLS{Insecure: true}, ""},
			{"cacert", protocol.TLS{CAFile: caFile(t)}, ""},
			{"wrong name", protocol.TLS{CAFile: caFile(t), ServerName: "other.test"}, "--sni"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := cl.dialer(t, Config{URL: s.URL, TLS: tc.tls})
				c, err := d.Dial(context.Background())
				if tc.want != "" {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("Dial: %v, want an error mentioning %s", err, tc.want)
					}
					if tc.want == "--insecure" && !strings.Contains(err.Error(), "--cacert") {
						t.Fatalf("Dial: %v, want --cacert mentioned", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if o := c.Do(context.Background(), soon()); o.Err != protocol.None || o.Status != 200 {
					t.Fatalf("%+v", o)
				}
			})
		}
	})
}

func TestServerGone(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		s := h2cServer(t, &recorder{}, false, true)
		_, c := cl.dial(t, Config{URL: s.URL, Cleartext: true})
		if o := c.Do(context.Background(), soon()); o.Err != protocol.None {
			t.Fatal(o)
		}
		s.srv.Close()
		o := c.Do(context.Background(), soon())
		for i := 0; i < 3 && !o.Done; i++ { // a GOAWAY may have ended the last request cleanly
			o = c.Do(context.Background(), soon())
		}
		if !o.Done {
			t.Fatalf("%+v, want Done", o)
		}
		if o := c.Do(context.Background(), soon()); !o.Done || o.Err == protocol.None {
			t.Fatalf("%+v, want an error and Done", o)
		}
	})
}

func TestDialErrors(t *testing.T) {
	addr := testport.Closed(t)
	d, err := NewDialer(Config{URL: "http://" + addr, Cleartext: true, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dial(context.Background()); err == nil {
		t.Fatal("Dial to a closed port succeeded")
	}
	if d.Opened() != 0 {
		t.Errorf("Opened() = %d", d.Opened())
	}
	// A server that accepts and says nothing: the dial timeout ends the wait.
	silent := serveRaw(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	d, err = NewDialer(Config{URL: "http://" + silent, Cleartext: true, DialTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "h2c") {
		t.Fatalf("Dial: %v, want a SETTINGS timeout mentioning h2c", err)
	}
	if d.Opened() != 0 { // no SETTINGS: not an HTTP/2 connection
		t.Errorf("Opened() = %d, want 0", d.Opened())
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // "" for valid
	}{
		{Config{URL: "https://example.test/x"}, ""},
		{Config{URL: "http://127.0.0.1:8080/", Cleartext: true, Streams: 10, Method: "POST", Body: []byte("x")}, ""},
		{Config{URL: "http://[::1]:8080/", Cleartext: true}, ""},
		{Config{}, "no URL"},
		{Config{URL: "http://127.0.0.1/"}, "h2c"},
		{Config{URL: "https://127.0.0.1/", Cleartext: true}, "http://"},
		{Config{URL: "http://127.0.0.1/", Cleartext: true, TLS: protocol.TLS{Enabled: true}}, "https://"},
		{Config{URL: "ftp://127.0.0.1/"}, "scheme"},
		{Config{URL: "https:///path"}, "no host"},
		{Config{URL: "https://a b/"}, "bad URL"},
		{Config{URL: "https://x/", Streams: -1}, "-m"},
		{Config{URL: "https://x/", Streams: 1 << 20}, "-m"},
		{Config{URL: "https://x/", DialTimeout: -time.Second}, "negative"},
		{Config{URL: "https://x/", Method: "GE T"}, "method"},
		{Config{URL: "https://x/", Method: "CONNECT"}, "CONNECT"},
		{Config{URL: "https://x/", Headers: []string{"NoColon"}}, "Name: value"},
		{Config{URL: "https://x/", Headers: []string{"Bad Name: v"}}, "bad name"},
		{Config{URL: "https://x/", Headers: []string{"X: a\nb"}}, "CR, LF"},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error mentioning %q", tc.cfg, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%+v: error on several lines: %q", tc.cfg, err)
		}
	}
	if _, err := NewDialer(Config{URL: "https://x/", TLS: protocol.TLS{CAFile: "/nonexistent"}}); err == nil || !strings.Contains(err.Error(), "--cacert") {
		t.Errorf("NewDialer with a missing CA file: %v", err)
	}
}

// TestChurn mixes what the engine does on a busy run: short deadlines,
// slow responses, Closes while requests are in flight, and redials after
// Done, on shared connections. It checks that every Do returns and that
// nothing is left open.
func TestChurn(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		// How long the run lasts, and its deadlines (500 µs plus up to
		// spread µs): x/net's client churns for less time, with deadlines
		// that leave more of its requests time to succeed.
		churn := map[string]struct {
			run    time.Duration
			spread int
		}{
			lean.name: {time.Second, 3000},
			xnet.name: {300 * time.Millisecond, 10000},
		}[cl.name]
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if d, _ := strconv.Atoi(r.URL.Query().Get("us")); d > 0 {
				select {
				case <-time.After(time.Duration(rand.IntN(d)) * time.Microsecond):
				case <-r.Context().Done():
				}
			}
			w.Write([]byte("ok"))
		})
		s := h2cServer(t, h, false, true)
		d := cl.dialer(t, Config{URL: s.URL + "/?us=3000", Cleartext: true, Streams: 5})
		ctx, cancel := context.WithCancel(context.Background())
		end := time.Now().Add(churn.run)
		var wg sync.WaitGroup
		var counts [protocol.NumErrClasses]atomic.Int64
		for i := 0; i < 15; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var c protocol.Conn
				for time.Now().Before(end) {
					if c == nil {
						var err error
						if c, err = d.Dial(ctx); err != nil {
							t.Error(err)
							return
						}
					}
					if rand.IntN(50) == 0 { // abort a request from another goroutine
						go func(c protocol.Conn) {
							time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
							c.Close()
						}(c)
					}
					o := c.Do(ctx, time.Now().Add(time.Duration(500+rand.IntN(churn.spread))*time.Microsecond))
					counts[o.Err].Add(1)
					if o.Done {
						c.Close()
						c = nil
					}
				}
				if c != nil {
					c.Close()
				}
			}()
		}
		wg.Wait()
		cancel()
		t.Logf("outcomes: none %d, timeout %d, read %d, write %d, protocol %d; %d connections",
			counts[protocol.None].Load(), counts[protocol.Timeout].Load(), counts[protocol.Read].Load(),
			counts[protocol.Write].Load(), counts[protocol.Protocol].Load(), d.Opened())
		if counts[protocol.None].Load() == 0 || counts[protocol.Timeout].Load() == 0 {
			t.Error("want both successes and timeouts")
		}
		if n := counts[protocol.Protocol].Load() + counts[protocol.Status].Load() + counts[protocol.Connect].Load(); n > 0 {
			t.Errorf("%d unexpected errors", n)
		}
		eventually(t, "every connection to close", func() bool { return s.ln.open.Load() == 0 })
	})
}
