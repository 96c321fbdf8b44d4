package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The in-process targets of these tests: a fasthttp server (the realistic
// peer) and a canned-response server whose bytes on the wire are known
// exactly. Both listen on 127.0.0.1:0 and stop when the test ends.

var (
	hello = []byte(strings.Repeat("h", 100))
	big   = []byte(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB
)

// seen is what the fasthttp server recorded of the last /echo request.
type seen struct {
	mu     sync.Mutex
	method string
	host   string
	header http.Header
	body   string
}

func (s *seen) get() (method, host string, h http.Header, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.method, s.host, s.header, s.body
}

// fastServer serves:
//
//	/hello      200, 100-byte body
//	/big        200, 1 MiB body
//	/chunked    200, 300 KiB body in chunks
//	/close      200 with Connection: close
//	/status/404 404
//	/slow       answers when the test ends
//	/echo       200, records the request in seen
type fastServer struct {
	addr string
	seen seen
	slow chan struct{}
}

func startFast(t testing.TB, tlsConf *tls.Config) *fastServer {
	t.Helper()
	fs := &fastServer{slow: make(chan struct{})}
	srv := &fasthttp.Server{Handler: fs.handle, Logger: quiet{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs.addr = ln.Addr().String()
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	go srv.Serve(ln) //nolint:errcheck
	t.Cleanup(func() {
		close(fs.slow)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.ShutdownWithContext(ctx) //nolint:errcheck
	})
	return fs
}

func (fs *fastServer) handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/hello":
		ctx.SetBody(hello)
	case "/big":
		ctx.SetBody(big)
	case "/chunked":
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for i := 0; i < 300; i++ {
				w.Write(big[:1024]) //nolint:errcheck
				if i%50 == 0 {
					w.Flush() //nolint:errcheck
				}
			}
		})
	case "/close":
		ctx.SetConnectionClose()
		ctx.SetBody(hello)
	case "/status/404":
		ctx.SetStatusCode(404)
		ctx.SetBodyString("not found")
	case "/slow":
		select {
		case <-fs.slow:
		case <-time.After(10 * time.Second):
		}
	case "/echo":
		h := http.Header{}
		for k, v := range ctx.Request.Header.All() {
			h.Add(string(k), string(v))
		}
		fs.seen.mu.Lock()
		fs.seen.method = string(ctx.Method())
		fs.seen.host = string(ctx.Host())
		fs.seen.header = h
		fs.seen.body = string(ctx.PostBody())
		fs.seen.mu.Unlock()
		ctx.SetBodyString("ok")
	default:
		ctx.SetStatusCode(404)
	}
}

// cannedServer answers every request with reply(request), byte for byte, and
// closes the connection after it if close is set. A nil reply never answers.
type cannedServer struct {
	addr  string
	mu    sync.Mutex
	reqs  []*http.Request
	bodys []string

	closed atomic.Int32 // connections the server has closed
}

func startCanned(t testing.TB, reply func(r *http.Request) (resp string, close bool)) *cannedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &cannedServer{addr: ln.Addr().String()}
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
				defer func() { c.Close(); cs.closed.Add(1) }()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(r.Body)
					cs.mu.Lock()
					cs.reqs = append(cs.reqs, r)
					cs.bodys = append(cs.bodys, string(body))
					cs.mu.Unlock()
					if reply == nil {
						continue // silent: read and never answer
					}
					resp, closeAfter := reply(r)
					if _, err := io.WriteString(c, resp); err != nil || closeAfter {
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
	return cs
}

func (cs *cannedServer) requests() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.reqs)
}

// always answers every request with resp.
func always(resp string) func(*http.Request) (string, bool) {
	return func(*http.Request) (string, bool) { return resp, false }
}

// startFixed answers every GET (a request without a body) with resp, and
// allocates nothing per request, so allocation tests can count the client.
func startFixed(t testing.TB, resp string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
				out := []byte(resp)
				buf := make([]byte, 64<<10)
				have := 0
				for {
					n, err := c.Read(buf[have:])
					if err != nil {
						return
					}
					have += n
					for {
						end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
						if end < 0 {
							break
						}
						if _, err := c.Write(out); err != nil {
							return
						}
						have = copy(buf, buf[end+4:have])
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

// quiet drops the fasthttp server's log lines (failed handshakes the tests
// cause on purpose).
type quiet struct{}

func (quiet) Printf(string, ...any) {}
