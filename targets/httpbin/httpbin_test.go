//lint:file-ignore SA1019 x/net/http2's client is the reference peer of httpbin's h2c tests

package httpbin

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/targets/tlscert"
)

// A client of one of the three ways in: plaintext HTTP/1.1 (fasthttp), h2c
// with prior knowledge and TLS with ALPN h2 (both net/http).
type client struct {
	name  string
	http  *http.Client
	base  string
	proto string // resp.Proto expected
}

func (c client) close() { c.http.CloseIdleConnections() }

// start starts a server for the test; it is closed at the end.
func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := newServer(cfg, testLoops)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func h1Client(s *Server) client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	return client{"http1", &http.Client{Transport: tr}, "http://" + s.Addr(), "HTTP/1.1"}
}

func h2cClient(s *Server) client {
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	return client{"h2c", &http.Client{Transport: tr}, "http://" + s.Addr(), "HTTP/2.0"}
}

// startTLS starts a TLS server and a client trusting its certificate.
func startTLS(t testing.TB, cfg Config) (*Server, client) {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	s := start(t, cfg)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	return s, client{"tls-h2", &http.Client{Transport: tr}, "https://" + s.Addr(), "HTTP/2.0"}
}

// allClients starts a plaintext and a TLS server with cfg and returns a
// client for each way in, cleaned up at the end.
func allClients(t *testing.T, cfg Config) []client {
	plain := start(t, cfg)
	_, tlsc := startTLS(t, cfg)
	cs := []client{h1Client(plain), h2cClient(plain), tlsc}
	t.Cleanup(func() {
		for _, c := range cs {
			c.close()
		}
	})
	return cs
}

type result struct {
	status int
	header http.Header
	body   []byte
	proto  string
}

func do(t testing.TB, c client, method, path string, body io.Reader, hdr ...string) result {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s %s: %v", c.name, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s %s: read body: %v", c.name, method, path, err)
	}
	return result{resp.StatusCode, resp.Header, b, resp.Proto}
}

// doc decodes a JSON document.
func doc(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func TestEndpoints(t *testing.T) {
	cfg := Config{MaxBytes: 1 << 20, MaxBody: 4096, MaxDelay: 2 * time.Second}
	payload := func(n int) []byte {
		s, _ := New(Config{MaxBytes: n})
		return s.payload
	}(1 << 20)

	type check func(t *testing.T, r result, c client)
	text := func(want string) check {
		return func(t *testing.T, r result, _ client) {
			if got := strings.TrimSpace(string(r.body)); got != want {
				t.Errorf("body %q, want %q", got, want)
			}
		}
	}
	bytesN := func(n int) check {
		return func(t *testing.T, r result, _ client) {
			if !bytes.Equal(r.body, payload[:n]) {
				t.Errorf("body: %d bytes, not the first %d of the payload", len(r.body), n)
			}
		}
	}
	fieldsEq := func(want map[string]any) check {
		return func(t *testing.T, r result, c client) {
			m := doc(t, r.body)
			for k, v := range want {
				if got, _ := json.Marshal(m[k]); string(got) != mustJSON(v) {
					t.Errorf("%s = %s, want %s", k, got, mustJSON(v))
				}
			}
		}
	}
	echoed := func(method, path string, more map[string]any) check {
		return func(t *testing.T, r result, c client) {
			m := doc(t, r.body)
			if got := m["url"]; got != c.base+path {
				t.Errorf("url %v, want %v", got, c.base+path)
			}
			if got := m["origin"]; got != "127.0.0.1" {
				t.Errorf("origin %v", got)
			}
			if method != "" && m["method"] != method {
				t.Errorf("method %v, want %v", m["method"], method)
			}
			h, _ := m["headers"].(map[string]any)
			if h["Host"] != strings.TrimPrefix(strings.TrimPrefix(c.base, "http://"), "https://") {
				t.Errorf("headers.Host %v; headers %v", h["Host"], h)
			}
			if h["X-Test"] != "yes" {
				t.Errorf("headers.X-Test %v", h["X-Test"])
			}
			fieldsEq(more)(t, r, c)
		}
	}

	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		ctype  string
		status int
		check  check
	}{
		{"bytes 100", "GET", "/bytes/100", "", "", 200, bytesN(100)},
		{"bytes 0", "GET", "/bytes/0", "", "", 200, bytesN(0)},
		{"bytes max", "GET", "/bytes/1048576", "", "", 200, bytesN(1 << 20)},
		{"bytes over max", "GET", "/bytes/1048577", "", "", 400, text("n must be 0..1048576")},
		{"bytes negative", "GET", "/bytes/-1", "", "", 400, text("n must be 0..1048576")},
		{"bytes not a number", "GET", "/bytes/1k", "", "", 400, text("n must be 0..1048576")},
		{"bytes empty", "GET", "/bytes/", "", "", 404, nil},
		{"bytes any method", "POST", "/bytes/10", "x", "", 200, bytesN(10)},
		{"status 200", "GET", "/status/200", "", "", 200, nil},
		{"status 201", "GET", "/status/201", "", "", 201, nil},
		{"status 204", "GET", "/status/204", "", "", 204, nil},
		{"status 404", "GET", "/status/404", "", "", 404, nil},
		{"status 418", "PUT", "/status/418", "", "", 418, nil},
		{"status 503", "GET", "/status/503", "", "", 503, nil},
		{"status 599", "GET", "/status/599", "", "", 599, nil},
		{"status 99", "GET", "/status/99", "", "", 400, text("code must be 200..599 (1xx are interim answers, not a response)")},
		{"status 600", "GET", "/status/600", "", "", 400, text("code must be 200..599 (1xx are interim answers, not a response)")},
		{"status text", "GET", "/status/ok", "", "", 400, text("code must be 200..599 (1xx are interim answers, not a response)")},
		{"status 101", "GET", "/status/101", "", "", 400, text("code must be 200..599 (1xx are interim answers, not a response)")},
		{"delay 0", "GET", "/delay/0?x=1", "", "", 200, echoed("", "/delay/0?x=1", map[string]any{"args": map[string]any{"x": "1"}})},
		{"delay over max", "GET", "/delay/3", "", "", 400, text("d must be a duration (10ms, 1.5s) or seconds (2, 0.5) from 0 to 2s")},
		{"delay negative", "GET", "/delay/-1s", "", "", 400, text("d must be a duration (10ms, 1.5s) or seconds (2, 0.5) from 0 to 2s")},
		{"delay garbage", "GET", "/delay/soon", "", "", 400, text("d must be a duration (10ms, 1.5s) or seconds (2, 0.5) from 0 to 2s")},
		{"get", "GET", "/get", "", "", 200, echoed("", "/get", map[string]any{"args": map[string]any{}})},
		{"get args", "GET", "/get?a=1&b=x+y&a=2&c=%C3%A9", "", "", 200, echoed("", "/get?a=1&b=x+y&a=2&c=%C3%A9",
			map[string]any{"args": map[string]any{"a": []any{"1", "2"}, "b": "x y", "c": "é"}})},
		{"get head", "HEAD", "/get", "", "", 200, text("")},
		{"get by post", "POST", "/get", "x", "", 405, text("405 method not allowed")},
		{"post text", "POST", "/post", "hello\n\"world\"", "text/plain", 200, echoed("", "/post",
			map[string]any{"data": "hello\n\"world\"", "json": nil, "form": map[string]any{}, "files": map[string]any{}})},
		{"post json", "POST", "/post", `{"a": [1, 2]}`, "application/json", 200, echoed("", "/post",
			map[string]any{"data": `{"a": [1, 2]}`, "json": map[string]any{"a": []any{1, 2}}})},
		{"post form", "POST", "/post?q=1", "a=1&b=%2F", "application/x-www-form-urlencoded", 200, echoed("", "/post?q=1",
			map[string]any{"data": "", "form": map[string]any{"a": "1", "b": "/"}, "args": map[string]any{"q": "1"}})},
		{"post not utf-8", "POST", "/post", "a\xffb", "", 200, fieldsEq(map[string]any{"data": "a\ufffdb"})},
		{"post by get", "GET", "/post", "", "", 405, text("405 method not allowed")},
		{"post too large", "POST", "/post", strings.Repeat("x", 4097), "", 413, text("request body must be at most 4096 bytes")},
		{"post at max", "POST", "/post", strings.Repeat("x", 4096), "", 200, fieldsEq(map[string]any{"data": strings.Repeat("x", 4096)})},
		{"anything", "GET", "/anything", "", "", 200, echoed("GET", "/anything", nil)},
		{"anything put", "PUT", "/anything/a/b?k=v", "body", "", 200, echoed("PUT", "/anything/a/b?k=v",
			map[string]any{"data": "body", "args": map[string]any{"k": "v"}})},
		{"anything delete", "DELETE", "/anything/", "", "", 200, echoed("DELETE", "/anything/", nil)},
		{"headers", "GET", "/headers", "", "", 200, func(t *testing.T, r result, c client) {
			m := doc(t, r.body)
			if len(m) != 1 {
				t.Errorf("keys %v, want headers only", m)
			}
			h, _ := m["headers"].(map[string]any)
			if h["X-Test"] != "yes" {
				t.Errorf("headers %v", h)
			}
		}},
		{"healthz", "GET", "/healthz", "", "", 200, text("ok")},
		{"not found", "GET", "/nothing", "", "", 404, text("404 page not found")},
		{"not found under get", "GET", "/get/x", "", "", 404, text("404 page not found")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range allClients(t, cfg) {
				t.Run(c.name, func(t *testing.T) {
					var body io.Reader
					if tc.body != "" {
						body = strings.NewReader(tc.body)
					}
					hdr := []string{"X-Test", "yes"}
					if tc.ctype != "" {
						hdr = append(hdr, "Content-Type", tc.ctype)
					}
					r := do(t, c, tc.method, tc.path, body, hdr...)
					if r.status != tc.status {
						t.Fatalf("status %d, want %d; body %q", r.status, tc.status, r.body)
					}
					if r.proto != c.proto {
						t.Errorf("proto %s, want %s", r.proto, c.proto)
					}
					if tc.status == 405 && r.header.Get("Allow") == "" {
						t.Errorf("405 without Allow")
					}
					if tc.check != nil {
						tc.check(t, r, c)
					}
				})
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDefaultCaps(t *testing.T) {
	s := start(t, Config{})
	c := h1Client(s)
	defer c.close()
	r := do(t, c, "GET", fmt.Sprintf("/bytes/%d", DefaultMaxBytes+1), nil)
	if r.status != 400 || strings.TrimSpace(string(r.body)) != "n must be 0..67108864" {
		t.Errorf("got %d %q", r.status, r.body)
	}
	r = do(t, c, "GET", "/delay/61", nil)
	if r.status != 400 || !strings.Contains(string(r.body), "from 0 to 1m0s") {
		t.Errorf("got %d %q", r.status, r.body)
	}
}

// TestDelay checks that /delay waits at least d, in both syntaxes, on each
// way in.
func TestDelay(t *testing.T) {
	for _, c := range allClients(t, Config{}) {
		for _, d := range []string{"150ms", "0.15"} {
			t.Run(c.name+"/"+d, func(t *testing.T) {
				t0 := time.Now()
				r := do(t, c, "GET", "/delay/"+d, nil)
				if el := time.Since(t0); el < 150*time.Millisecond {
					t.Errorf("answered after %v, want at least 150ms", el)
				}
				if r.status != 200 {
					t.Errorf("status %d", r.status)
				}
				doc(t, r.body)
			})
		}
	}
}

// TestDelayClientGone checks that a client that gives up frees its /delay at
// once.
func TestDelayClientGone(t *testing.T) {
	plain := start(t, Config{})
	tlsS, tlsC := startTLS(t, Config{})
	for _, tc := range []struct {
		s *Server
		c client
	}{{plain, h1Client(plain)}, {plain, h2cClient(plain)}, {tlsS, tlsC}} {
		t.Run(tc.c.name, func(t *testing.T) {
			defer tc.c.close()
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", tc.c.base+"/delay/30", nil)
			errc := make(chan error, 1)
			go func() {
				resp, err := tc.c.http.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			waitFor(t, "the request to wait", func() bool { return tc.s.counts.waiting.Load() == 1 })
			cancel()
			<-errc
			waitFor(t, "the wait to end", func() bool { return tc.s.counts.waiting.Load() == 0 })
		})
	}
}

// TestCounting checks that Served and /stats count exactly the requests made,
// on every way in, without /healthz and /stats.
func TestCounting(t *testing.T) {
	s := start(t, Config{})
	tlsS, tlsC := startTLS(t, Config{})
	for _, tc := range []struct {
		s *Server
		c client
	}{{s, h1Client(s)}, {s, h2cClient(s)}, {tlsS, tlsC}} {
		t.Run(tc.c.name, func(t *testing.T) {
			defer tc.c.close()
			before := tc.s.Served()
			for i := range 100 {
				path := []string{"/bytes/100", "/get", "/status/404", "/nothing"}[i%4]
				do(t, tc.c, "GET", path, nil)
				do(t, tc.c, "GET", "/healthz", nil)
			}
			if got := tc.s.Served() - before; got != 100 {
				t.Errorf("Served went up by %d, want 100", got)
			}
			var st struct {
				Requests uint64
				Waiting  int64
				Status   map[string]uint64
			}
			if err := json.Unmarshal(do(t, tc.c, "GET", "/stats", nil).body, &st); err != nil {
				t.Fatal(err)
			}
			if st.Requests != tc.s.Served() || st.Requests-before != 100 {
				t.Errorf("/stats requests %d, Served %d, before %d", st.Requests, tc.s.Served(), before)
			}
			if st.Status["404"] < 50 || st.Status["200"] < 50 {
				t.Errorf("/stats status %v", st.Status)
			}
		})
	}
}
