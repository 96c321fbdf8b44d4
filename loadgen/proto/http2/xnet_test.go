package http2

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/proto"
)

func libDial(t testing.TB, cfg Config) (*libDialer, proto.Conn) {
	t.Helper()
	d := newLib(t, cfg)
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c
}

func newLib(t testing.TB, cfg Config) *libDialer {
	t.Helper()
	d, err := NewLibraryDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d.(*libDialer)
}

func TestLibraryRequests(t *testing.T) {
	h := &recorder{}
	servers := map[string]func() (*testServer, Config){
		"h2c": func() (*testServer, Config) {
			s := h2cServer(t, h, false, true)
			return s, Config{URL: s.URL, Cleartext: true}
		},
		"h2-tls": func() (*testServer, Config) {
			s := tlsServer(t, h, "h2", "http/1.1")
			return s, Config{URL: s.URL, TLS: proto.TLS{Insecure: true}}
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
				err                 proto.ErrClass
				n                   int
			}{
				{name: "GET", query: "/a/b?n=100", status: 200, n: 100},
				{name: "GET big", query: "/?n=200000", status: 200, n: 200000},
				{name: "POST", method: "POST", query: "/post?n=7", body: []byte(strings.Repeat("b", 100_000)), status: 200, n: 7},
				{name: "503", query: "/?status=503", status: 503, err: proto.Status, n: 100},
				{name: "headers", query: "/h", headers: []string{"X-Test: yes", "Host: example.test", "Connection: keep-alive", "User-Agent: ua/1"}, status: 200, n: 100},
			}
			const perConn = 3
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					cfg := base
					cfg.URL += tc.query
					cfg.Method, cfg.Body, cfg.Headers = tc.method, tc.body, tc.headers
					_, c := libDial(t, cfg)
					before := h.requests.Load()
					for i := 0; i < perConn; i++ {
						o := c.Do(context.Background(), soon())
						if o.Status != tc.status || o.Err != tc.err || o.Done {
							t.Fatalf("request %d: %+v, want status %d err %v", i, o, tc.status, tc.err)
						}
						if o.Bytes != int64(tc.n) || o.Written != int64(len(tc.body)) {
							t.Errorf("request %d: Bytes %d, Written %d: want the bodies, %d and %d", i, o.Bytes, o.Written, tc.n, len(tc.body))
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
}

func TestLibraryValidate(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "http://127.0.0.1/"},
		{URL: "https://x/", Streams: -1},
		{URL: "https://x/", TLS: proto.TLS{CAFile: "/nonexistent"}},
	} {
		_, want := NewDialer(cfg)
		_, err := NewLibraryDialer(cfg)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%+v: %v, want NewDialer's error %v", cfg, err, want)
		}
	}
}

func TestLibraryStreamsShareConnections(t *testing.T) {
	const conns, streams = 2, 10
	h := &inFlight{want: streams, n: map[string]int{}, max: map[string]int{}}
	h.cond = sync.NewCond(&h.mu)
	s := h2cServer(t, h, false, true)
	d := newLib(t, Config{URL: s.URL, Cleartext: true, Streams: streams})
	var cs []proto.Conn
	for i := 0; i < conns*streams; i++ {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if got := d.Opened(); got != conns {
		t.Errorf("Opened() = %d, want %d", got, conns)
	}
	if got := s.ln.accepted.Load(); got != conns {
		t.Errorf("server accepted %d connections, want %d", got, conns)
	}
	var wg sync.WaitGroup
	outcomes := make([]proto.Outcome, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = c.Do(context.Background(), time.Now().Add(20*time.Second))
		}()
	}
	wg.Wait()
	for i, o := range outcomes {
		if o.Err != proto.None || o.Status != 200 || o.Done {
			t.Fatalf("stream %d: %+v (503: the streams of a connection did not run concurrently)", i, o)
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
	for _, c := range cs {
		c.Close()
	}
	eventually(t, "the server to see both connections closed", func() bool { return s.ln.open.Load() == 0 })
}

func TestLibraryCloseKeepsSharedConnection(t *testing.T) {
	s := h2cServer(t, &recorder{}, false, true)
	d := newLib(t, Config{URL: s.URL, Cleartext: true, Streams: 2})
	a, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close() // idempotent
	if o := a.Do(context.Background(), soon()); !o.Done || o.Err == proto.None {
		t.Errorf("Do after Close: %+v, want an error and Done", o)
	}
	if o := b.Do(context.Background(), soon()); o.Err != proto.None || o.Done {
		t.Fatalf("the remaining stream: %+v", o)
	}
	if s.ln.open.Load() != 1 {
		t.Fatalf("%d connections open, want 1", s.ln.open.Load())
	}
	b.Close()
	eventually(t, "the server to see the connection closed", func() bool { return s.ln.open.Load() == 0 })
	if d.Opened() != 1 {
		t.Errorf("Opened() = %d, want 1", d.Opened())
	}
}

func TestLibraryTLSVerification(t *testing.T) {
	s := tlsServer(t, &recorder{}, "h2")
	for _, tc := range []struct {
		name string
		tls  proto.TLS
		want string // error text, "" for success
	}{
		{"default", proto.TLS{}, "--insecure"},
		{"insecure", proto.TLS{Insecure: true}, ""},
		{"cacert", proto.TLS{CAFile: caFile(t)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newLib(t, Config{URL: s.URL, TLS: tc.tls})
			c, err := d.Dial(context.Background())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--cacert") {
					t.Fatalf("Dial: %v, want an error mentioning --insecure and --cacert", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if o := c.Do(context.Background(), soon()); o.Err != proto.None || o.Status != 200 {
				t.Fatalf("%+v", o)
			}
		})
	}
}

func TestLibraryHTTP1OnlyServer(t *testing.T) {
	h := &recorder{}
	for _, tc := range []struct {
		name string
		cfg  func() Config
		want string
	}{
		{"tls", func() Config { return Config{URL: tlsServer(t, h, "http/1.1").URL, TLS: proto.TLS{Insecure: true}} }, "did not negotiate HTTP/2"},
		{"tls without ALPN", func() Config { return Config{URL: tlsServer(t, h).URL, TLS: proto.TLS{Insecure: true}} }, "did not negotiate HTTP/2"},
		{"h2c", func() Config { return Config{URL: h2cServer(t, h, true, false).URL, Cleartext: true} }, "h2c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newLib(t, tc.cfg())
			_, err := d.Dial(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-p http1") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Dial: %v, want a one-line error mentioning %q and -p http1", err, tc.want)
			}
			if d.Opened() != 1 {
				t.Errorf("Opened() = %d, want 1", d.Opened())
			}
		})
	}
}

func TestLibraryDeadline(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
			h := newSlow()
			defer h.free()
			mux := http.NewServeMux()
			mux.Handle("/slow", h)
			mux.Handle("/", &recorder{})
			s := h2cServer(t, mux, false, true)
			d, c := libDial(t, Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams})
			for i := 0; i < 2; i++ {
				if o := c.Do(context.Background(), time.Now().Add(50*time.Millisecond)); o.Err != proto.Timeout || o.Done {
					t.Fatalf("%+v, want Timeout and not Done", o)
				}
			}
			if o := c.Do(context.Background(), time.Now().Add(-time.Second)); o.Err != proto.Timeout || o.Done {
				t.Fatalf("deadline past: %+v, want Timeout and not Done", o)
			}
			eventually(t, "the server to see the resets", func() bool { return h.reset.Load() >= 2 })
			if streams > 1 { // another stream of the same connection
				other, err := d.Dial(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				if o := other.Do(context.Background(), time.Now().Add(50*time.Millisecond)); o.Err != proto.Timeout || o.Done {
					t.Fatalf("the other stream: %+v, want Timeout and not Done", o)
				}
			}
			h.free()
			if o := c.Do(context.Background(), soon()); o.Err != proto.None || o.Status != 200 || o.Done {
				t.Fatalf("after timeouts: %+v", o)
			}
			if got := s.ln.accepted.Load(); got != 1 {
				t.Errorf("%d connections, want 1", got)
			}
		})
	}
}

func TestLibraryContextEndUnblocksDo(t *testing.T) {
	h := newSlow()
	defer h.free()
	s := h2cServer(t, h, false, true)
	_, c := libDial(t, Config{URL: s.URL + "/slow", Cleartext: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan proto.Outcome, 1)
	go func() { done <- c.Do(ctx, time.Time{}) }()
	<-h.started
	cancel()
	select {
	case o := <-done:
		if o.Err != proto.Timeout || o.Done {
			t.Errorf("%+v, want Timeout and not Done", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the context did not unblock Do")
	}
	if o := c.Do(ctx, soon()); o.Err != proto.Timeout || o.Done {
		t.Errorf("Do after the run's end: %+v, want Timeout and not Done", o)
	}
}

func TestLibraryCloseUnblocksDo(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
			h := newSlow()
			defer h.free()
			s := h2cServer(t, h, false, true)
			d := newLib(t, Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams})
			var cs []proto.Conn
			for i := 0; i < streams; i++ {
				c, err := d.Dial(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
			done := make(chan proto.Outcome, streams)
			for _, c := range cs {
				go func() { done <- c.Do(context.Background(), time.Time{}) }()
			}
			for range cs {
				<-h.started
			}
			for i, c := range cs {
				c.Close()
				select {
				case o := <-done:
					if o.Err != proto.Read || !o.Done {
						t.Errorf("Do aborted by Close: %+v, want Read and Done", o)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("Close %d did not unblock Do", i)
				}
			}
			eventually(t, "the connection to close", func() bool { return s.ln.open.Load() == 0 })
		})
	}
}

// libPeerRequest is peer.request for x/net's client, which wants its PINGs
// answered (a Dial waits for one).
func libPeerRequest(p *peer) *http2.MetaHeadersFrame {
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			return nil
		}
		p.mu.Lock()
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				p.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				p.fr.WritePing(true, f.Data)
			}
		}
		p.mu.Unlock()
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			return h
		}
	}
}

func TestLibraryGoAway(t *testing.T) {
	addr := startPeer(t, nil, func(p *peer) {
		a, b := libPeerRequest(p), libPeerRequest(p)
		if a == nil || b == nil {
			return
		}
		p.respond(a.StreamID, "200", 5)
		p.mu.Lock()
		p.fr.WriteGoAway(a.StreamID, http2.ErrCodeNo, nil)
		p.mu.Unlock()
		for libPeerRequest(p) != nil { // until the client closes
		}
	})
	d := newLib(t, Config{URL: "http://" + addr + "/", Cleartext: true, Streams: 2})
	c1, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	done := make(chan proto.Outcome, 2)
	go func() { done <- c1.Do(context.Background(), soon()) }()
	time.Sleep(10 * time.Millisecond) // c1 takes stream 1
	go func() { done <- c2.Do(context.Background(), soon()) }()
	var ok, refused int
	for i := 0; i < 2; i++ {
		o := <-done
		switch {
		case o.Err == proto.None && o.Status == 200 && o.Bytes == 5: // Done if the GOAWAY was read by then
			ok++
		case o.Err == proto.Read && o.Done:
			refused++
		default:
			t.Errorf("%+v", o)
		}
	}
	if ok != 1 || refused != 1 {
		t.Errorf("%d answered and %d refused, want 1 and 1", ok, refused)
	}
	if o := c1.Do(context.Background(), soon()); !o.Done || o.Err != proto.Write {
		t.Errorf("Do after GOAWAY: %+v, want Write (unsent) and Done", o)
	}
	c3, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c3.Close()
	if d.Opened() != 2 {
		t.Errorf("Opened() = %d: a Dial after GOAWAY must open a new connection", d.Opened())
	}
}

func TestLibraryServerGone(t *testing.T) {
	s := h2cServer(t, &recorder{}, false, true)
	_, c := libDial(t, Config{URL: s.URL, Cleartext: true})
	if o := c.Do(context.Background(), soon()); o.Err != proto.None {
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
	if o := c.Do(context.Background(), soon()); !o.Done || o.Err == proto.None {
		t.Fatalf("%+v, want an error and Done", o)
	}
}

// TestLibraryChurn is TestChurn on the library client: short deadlines,
// slow responses, Closes while requests are in flight and redials after
// Done, on shared connections. Every Do returns and nothing is left open.
func TestLibraryChurn(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Duration(rand.IntN(3000)) * time.Microsecond):
		case <-r.Context().Done():
		}
		w.Write([]byte("ok"))
	})
	s := h2cServer(t, h, false, true)
	d := newLib(t, Config{URL: s.URL, Cleartext: true, Streams: 5})
	end := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	var counts [proto.NumErrClasses]atomic.Int64
	for i := 0; i < 15; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c proto.Conn
			for time.Now().Before(end) {
				if c == nil {
					var err error
					if c, err = d.Dial(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
				if rand.IntN(50) == 0 { // abort a request from another goroutine
					go func(c proto.Conn) {
						time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
						c.Close()
					}(c)
				}
				o := c.Do(context.Background(), time.Now().Add(time.Duration(500+rand.IntN(10000))*time.Microsecond))
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
	t.Logf("outcomes: none %d, timeout %d, read %d, write %d, protocol %d; %d connections",
		counts[proto.None].Load(), counts[proto.Timeout].Load(), counts[proto.Read].Load(),
		counts[proto.Write].Load(), counts[proto.Protocol].Load(), d.Opened())
	if counts[proto.None].Load() == 0 || counts[proto.Timeout].Load() == 0 {
		t.Error("want both successes and timeouts")
	}
	if n := counts[proto.Protocol].Load() + counts[proto.Status].Load() + counts[proto.Connect].Load(); n > 0 {
		t.Errorf("%d unexpected errors", n)
	}
	eventually(t, "every connection to close", func() bool { return s.ln.open.Load() == 0 })
}
