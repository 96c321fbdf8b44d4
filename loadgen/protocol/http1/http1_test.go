package http1

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/loadgen/protocol"
	"loadgen/targets/tlscert"
)

// dial opens one Conn for cfg and closes it when the test ends.
func dial(t testing.TB, cfg Config) (*Dialer, *conn) {
	t.Helper()
	d, err := NewDialer(cfg)
	if err != nil {
		t.Fatalf("NewDialer: %v", err)
	}
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c.(*conn)
}

func soon() time.Time { return time.Now().Add(5 * time.Second) }

func want(t *testing.T, got, want protocol.Outcome) {
	t.Helper()
	if got != want {
		t.Errorf("outcome %+v, want %+v", got, want)
	}
}

func TestBytesExact(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nServer: canned\r\nContent-Length: 5\r\n\r\nhello"
	cs := startCanned(t, always(resp))
	d, c := dial(t, Config{URL: "http://" + cs.addr + "/x?y=1"})
	for i := 0; i < 3; i++ {
		want(t, c.Do(context.Background(), soon()),
			protocol.Outcome{Status: 200, Bytes: int64(len(resp)), Written: int64(len(d.req))})
	}
	if n := cs.requests(); n != 3 {
		t.Errorf("server saw %d requests on one connection, want 3", n)
	}
	if got := cs.reqs[0].RequestURI; got != "/x?y=1" {
		t.Errorf("request target %q, want /x?y=1", got)
	}
}

func TestGetAndPost(t *testing.T) {
	fs := startFast(t, nil)
	t.Run("GET", func(t *testing.T) {
		d, c := dial(t, Config{URL: "http://" + fs.addr + "/hello"})
		o := c.Do(context.Background(), soon())
		if o.Status != 200 || o.Err != protocol.None || o.Done {
			t.Fatalf("outcome %+v", o)
		}
		if o.Bytes <= int64(len(hello)) || o.Written != int64(len(d.req)) {
			t.Errorf("Bytes %d (body is %d), Written %d (request is %d)", o.Bytes, len(hello), o.Written, len(d.req))
		}
		if strings.Contains(string(d.req), "Content-Length") {
			t.Errorf("GET without body sends Content-Length:\n%s", d.req)
		}
	})
	t.Run("POST", func(t *testing.T) {
		body := []byte(`{"k":"v"}`)
		d, c := dial(t, Config{URL: "http://" + fs.addr + "/echo", Method: "POST", Body: body})
		o := c.Do(context.Background(), soon())
		if o.Status != 200 || o.Err != protocol.None || o.Written != int64(len(d.req)) {
			t.Fatalf("outcome %+v, request %d bytes", o, len(d.req))
		}
		method, _, h, got := fs.seen.get()
		if method != "POST" || got != string(body) || h.Get("Content-Length") != "9" {
			t.Errorf("server saw %s with body %q and Content-Length %q", method, got, h.Get("Content-Length"))
		}
	})
}

func TestHeadersReachServer(t *testing.T) {
	fs := startFast(t, nil)
	_, c := dial(t, Config{URL: "http://" + fs.addr + "/echo", Headers: []string{
		"X-Test: one", "x-other:two  ", "Host: example.test",
	}})
	if o := c.Do(context.Background(), soon()); o.Status != 200 {
		t.Fatalf("outcome %+v", o)
	}
	_, host, h, _ := fs.seen.get()
	if host != "example.test" {
		t.Errorf("Host %q, want the override example.test", host)
	}
	if h.Get("X-Test") != "one" || h.Get("X-Other") != "two" {
		t.Errorf("custom headers not received: %v", h)
	}
	if h.Get("User-Agent") != "loadgen" {
		t.Errorf("User-Agent %q, want loadgen", h.Get("User-Agent"))
	}

	_, c = dial(t, Config{URL: "http://" + fs.addr + "/echo", Headers: []string{"User-Agent: mine"}})
	c.Do(context.Background(), soon())
	_, host, h, _ = fs.seen.get()
	if h.Values("User-Agent")[0] != "mine" || len(h.Values("User-Agent")) != 1 {
		t.Errorf("User-Agent %q, want only the user's", h.Values("User-Agent"))
	}
	if host != fs.addr {
		t.Errorf("default Host %q, want %q", host, fs.addr)
	}
}

func TestChunked(t *testing.T) {
	t.Run("canned", func(t *testing.T) {
		const resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" +
			"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Sum: 12\r\n\r\n"
		cs := startCanned(t, always(resp))
		_, c := dial(t, Config{URL: "http://" + cs.addr + "/"})
		for i := 0; i < 3; i++ {
			o := c.Do(context.Background(), soon())
			if o.Status != 200 || o.Err != protocol.None || o.Done || o.Bytes != int64(len(resp)) {
				t.Fatalf("request %d: outcome %+v, want 200 with %d bytes, kept alive", i, o, len(resp))
			}
		}
	})
	t.Run("fasthttp", func(t *testing.T) {
		fs := startFast(t, nil)
		_, c := dial(t, Config{URL: "http://" + fs.addr + "/chunked"})
		for i := 0; i < 3; i++ {
			o := c.Do(context.Background(), soon())
			if o.Status != 200 || o.Err != protocol.None || o.Done || o.Bytes < 300*1024 {
				t.Fatalf("request %d: outcome %+v", i, o)
			}
		}
	})
}

func TestLargeBody(t *testing.T) {
	fs := startFast(t, nil)
	_, c := dial(t, Config{URL: "http://" + fs.addr + "/big"})
	var first int64
	for i := 0; i < 3; i++ {
		o := c.Do(context.Background(), soon())
		if o.Status != 200 || o.Err != protocol.None || o.Done || o.Bytes < int64(len(big)) {
			t.Fatalf("request %d: outcome %+v", i, o)
		}
		if i == 0 {
			first = o.Bytes
		} else if o.Bytes != first {
			t.Errorf("request %d read %d bytes, the first %d", i, o.Bytes, first)
		}
	}
}

func TestTruncatedBody(t *testing.T) {
	for _, n := range []int{10, 100_000} { // within the read buffer, and past it
		body := strings.Repeat("z", n/2)
		resp := "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n" + body
		cs := startCanned(t, func(*http.Request) (string, bool) { return resp, true })
		_, c := dial(t, Config{URL: "http://" + cs.addr + "/"})
		o := c.Do(context.Background(), soon())
		if o.Err != protocol.Read || !o.Done || o.Bytes != int64(len(resp)) {
			t.Errorf("%d-byte body cut in half: outcome %+v, want a read error, Done, %d bytes", n, o, len(resp))
		}
	}
}

func TestConnectionEnds(t *testing.T) {
	fs := startFast(t, nil)
	t.Run("Connection: close", func(t *testing.T) {
		_, c := dial(t, Config{URL: "http://" + fs.addr + "/close"})
		o := c.Do(context.Background(), soon())
		if o.Status != 200 || o.Err != protocol.None || !o.Done {
			t.Errorf("outcome %+v, want 200 and Done", o)
		}
	})
	cases := []struct {
		name, resp string
		done       bool
	}{
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", false},
		{"body to EOF", "HTTP/1.1 200 OK\r\n\r\nall of it", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := startCanned(t, func(*http.Request) (string, bool) { return tc.resp, tc.done })
			_, c := dial(t, Config{URL: "http://" + cs.addr + "/"})
			want(t, c.Do(context.Background(), soon()),
				protocol.Outcome{Status: 200, Done: tc.done, Bytes: int64(len(tc.resp)), Written: int64(len(c.req))})
		})
	}
}

func TestStatusKeepsConnection(t *testing.T) {
	fs := startFast(t, nil)
	_, c := dial(t, Config{URL: "http://" + fs.addr + "/status/404"})
	for i := 0; i < 2; i++ {
		o := c.Do(context.Background(), soon())
		if o.Status != 404 || o.Err != protocol.Status || o.Done {
			t.Fatalf("outcome %+v, want 404, Err status, connection kept", o)
		}
	}
}

func TestResponseShapes(t *testing.T) {
	cases := []struct {
		name, method, resp string
		status             int32
		err                protocol.ErrClass
		done               bool
	}{
		{"interim 100", "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, protocol.None, false},
		{"204 no body", "GET", "HTTP/1.1 204 No Content\r\n\r\n", 204, protocol.None, false},
		{"HEAD", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 200, protocol.None, false},
		{"garbage", "GET", "SMTP ready\r\n\r\n", 0, protocol.Protocol, true},
		{"bad chunk", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, protocol.Protocol, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := startCanned(t, always(tc.resp))
			_, c := dial(t, Config{URL: "http://" + cs.addr + "/", Method: tc.method})
			n := 2
			if tc.done {
				n = 1
			}
			for i := 0; i < n; i++ { // a kept connection must be framed right for the next request
				o := c.Do(context.Background(), soon())
				if o.Status != tc.status || o.Err != tc.err || o.Done != tc.done {
					t.Fatalf("request %d: outcome %+v, want status %d err %v done %v", i, o, tc.status, tc.err, tc.done)
				}
			}
		})
	}
}

func TestPeerClosesIdle(t *testing.T) {
	// The peer closes after answering without saying so; the next request
	// finds the connection dead.
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	cs := startCanned(t, func(*http.Request) (string, bool) { return resp, true })
	_, c := dial(t, Config{URL: "http://" + cs.addr + "/"})
	if o := c.Do(context.Background(), soon()); o.Err != protocol.None || o.Done {
		t.Fatalf("first request: %+v", o)
	}
	for deadline := time.Now().Add(10 * time.Second); cs.closed.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the peer never closed")
		}
	}
	o := c.Do(context.Background(), soon())
	if (o.Err != protocol.Read && o.Err != protocol.Write) || !o.Done {
		t.Errorf("outcome %+v, want a read or write error and Done", o)
	}
}

func TestTimeout(t *testing.T) {
	fs := startFast(t, nil)
	_, c := dial(t, Config{URL: "http://" + fs.addr + "/slow"})
	o := c.Do(context.Background(), time.Now().Add(50*time.Millisecond))
	if o.Err != protocol.Timeout || !o.Done {
		t.Errorf("outcome %+v, want Timeout and Done", o)
	}
	// A deadline already past fails before anything is read.
	_, c = dial(t, Config{URL: "http://" + fs.addr + "/hello"})
	if o := c.Do(context.Background(), time.Now().Add(-time.Second)); o.Err != protocol.Timeout || !o.Done {
		t.Errorf("past deadline: outcome %+v, want Timeout and Done", o)
	}
}

func TestDialRefused(t *testing.T) {
	addr := testport.Closed(t)
	d, err := NewDialer(Config{URL: "http://" + addr + "/", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial(context.Background())
	if err == nil {
		c.Close()
		t.Fatal("Dial to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Errorf("error %q does not say the connection was refused", err)
	}
}

func TestCloseUnblocksDo(t *testing.T) {
	cs := startCanned(t, nil) // reads requests, never answers
	_, c := dial(t, Config{URL: "http://" + cs.addr + "/"})
	done := make(chan protocol.Outcome, 1)
	go func() { done <- c.Do(context.Background(), time.Time{}) }()
	for cs.requests() == 0 { // the request is in, Do is waiting for the answer
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case o := <-done:
		if o.Err != protocol.Read || !o.Done {
			t.Errorf("aborted Do: outcome %+v, want a read error and Done", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do still blocked 10s after Close")
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.Write || !o.Done {
		t.Errorf("Do after Close: outcome %+v, want a write error and Done", o)
	}
}

func TestTLS(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	var alpn atomic.Value
	alpn.Store("")
	fs := startFast(t, &tls.Config{
		Certificates: []tls.Certificate{cert.TLS},
		NextProtos:   []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			alpn.Store(cs.NegotiatedProtocol)
			return nil
		},
	})
	url := "https://" + fs.addr + "/hello"

	t.Run("unverified", func(t *testing.T) {
		d, err := NewDialer(Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial(context.Background())
		if err == nil {
			c.Close()
			t.Fatal("Dial trusted a self-signed certificate")
		}
		if !strings.Contains(err.Error(), "--insecure") || !strings.Contains(err.Error(), "--cacert") {
			t.Errorf("error %q does not point to --insecure or --cacert", err)
		}
	})
	check := func(t *testing.T, cfg Config) {
		_, c := dial(t, cfg)
		for i := 0; i < 2; i++ {
			o := c.Do(context.Background(), soon())
			if o.Status != 200 || o.Err != protocol.None || o.Done || o.Bytes <= int64(len(hello)) {
				t.Fatalf("outcome %+v", o)
			}
		}
		if p := alpn.Load(); p != "http/1.1" {
			t.Errorf("ALPN %q, want http/1.1", p)
		}
	}
	t.Run("insecure", func(t *testing.T) {
		check(t, Config{URL: url, TLS: protocol.TLS{Insecure: true}})
	})
	t.Run("cacert", func(t *testing.T) {
		ca := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(ca, cert.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, Config{URL: url, TLS: protocol.TLS{CAFile: ca}})
	})
	// The first request waits under the tls.Conn for its read (with the
	// handshake's Finished): if it cannot leave then, it is a write error.
	t.Run("first request not sent", func(t *testing.T) {
		_, c := dial(t, Config{URL: url, TLS: protocol.TLS{Insecure: true}})
		c.fc.Conn = failWrites{c.fc.Conn}
		if o := c.Do(context.Background(), soon()); o.Err != protocol.Write || !o.Done || o.Written != 0 {
			t.Fatalf("outcome %+v, want a write error", o)
		}
	})
	t.Run("--tls on an http URL", func(t *testing.T) {
		check(t, Config{URL: "http://" + fs.addr + "/hello", TLS: protocol.TLS{Enabled: true, Insecure: true}})
	})
}

// failWrites is a connection whose writes fail.
type failWrites struct{ net.Conn }

func (failWrites) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestDialContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := NewDialer(Config{URL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dial(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with a cancelled context: %v, want context.Canceled", err)
	}
}
