// Package httpbin is an httpbin-style HTTP target: the server a load test
// drives through a mesh, an ingress or a bare network path.
//
// Endpoints, as on httpbin.org:
//
//	/get, /post, /anything, /anything/*   the request echoed as JSON
//	/headers                              the request headers as JSON
//	/bytes/{n}                            n bytes (n ≤ MaxBytes)
//	/status/{code}                        that status (200..599)
//	/delay/{d}                            the echo after d: "10ms", "1.5s" or seconds, "2" (d ≤ MaxDelay)
//	/healthz                              200 "ok"
//	/stats                                {"requests": N, "waiting": N, "status": {"200": N, …}}
//
// /status refuses 1xx codes (400): they are interim answers, and an
// HTTP/1.1 client would wait for a final response that never comes.
//
// The router is chi on net/http, which serves TLS (h2 and http/1.1 by ALPN)
// and h2c with prior knowledge. Plaintext HTTP/1.1 is served by fasthttp on
// the same port, from the same route table and endpoint code: a connection
// is given to one or the other by its first bytes. On Linux the hot path
// comes first: event loops answer plain keep-alive requests to /bytes,
// /status, /healthz and /stats themselves, with fasthttp's bytes, and hand
// a connection to fasthttp (or net/http's h2c) at the first request they
// do not answer (loop_linux.go). /bytes/{n} answers from one buffer filled
// in New, without allocating.
//
// Every response served is counted, except those of /healthz and /stats.
package httpbin

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"loadgen/targets/accept"

	"github.com/quic-go/quic-go/http3"
	"github.com/valyala/fasthttp"
)

// Server is an httpbin-style server: New, Start, Close.
type Server struct {
	cfg     Config
	loops   bool   // plaintext: event loops first; otherwise a goroutine per connection
	payload []byte // the /bytes buffer, MaxBytes long, never written after New
	routes  routes
	router  http.Handler
	reqs    sync.Pool // *request
	counts  counters
	done    chan struct{} // closed by Close
	caller  *caller       // the calls of a multi-hop target; nil without Calls

	mu    sync.Mutex
	state accept.State            // listener, started, closed: under mu
	fast  *fasthttp.Server        // plaintext HTTP/1.1, one ServeConn per connection
	std   *http.Server            // TLS, or h2c on plaintext
	h3    *http3.Server           // with HTTP3
	h2    *chanListener           // plaintext: the h2c connections, for std
	ev    *loops                  // plaintext with loops: set by Start
	conns map[*sniffConn]struct{} // served by goroutines
	tick  atomic.Int64            // advanced by reap, from 1
	// adopted counts the connections event loops handed over.
	adopted atomic.Uint64
	// limit is MaxConns on every accept path: an admitted connection is
	// active until closed, on its loop or by the goroutines it was handed
	// over to (untrack).
	limit accept.Cap
	wg    sync.WaitGroup
}

// New checks cfg and prepares a server; Start makes it listen.
func New(cfg Config) (*Server, error) { return newServer(cfg, loopSupported) }

func newServer(cfg Config, loops bool) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:     cfg,
		limit:   accept.Cap{Max: cfg.MaxConns},
		loops:   loops && len(cfg.Calls) == 0, // a request waits for its calls: not on a loop
		payload: make([]byte, cfg.MaxBytes),
		routes:  newRoutes(),
		done:    make(chan struct{}),
		conns:   make(map[*sniffConn]struct{}),
	}
	s.tick.Store(1)
	if len(cfg.Calls) > 0 {
		var err error
		if s.caller, err = newCaller(cfg, s.done, &s.wg); err != nil {
			return nil, err
		}
	}
	// Random bytes, the same for every server: nothing on the path can
	// compress them, and a run can be compared with the next.
	rand.NewChaCha8([32]byte{'h', 't', 't', 'p', 'b', 'i', 'n'}).Read(s.payload)
	s.reqs.New = func() any { return new(request) }
	s.router = s.newRouter()
	return s, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln, err := s.state.Listen("httpbin", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.std = &http.Server{
		Handler:           s.router,
		ReadHeaderTimeout: s.cfg.IdleTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
		Protocols:         new(http.Protocols),
	}
	if s.cfg.TLS != nil {
		if s.cfg.HTTP3 {
			if err := s.startH3(ln.Addr().(*net.TCPAddr)); err != nil {
				ln.Close()
				return fmt.Errorf("httpbin: %w", err)
			}
		}
		ln = capListener{ln, s}
		s.std.TLSConfig = s.cfg.TLS.Clone()
		s.std.Protocols.SetHTTP1(true)
		s.std.Protocols.SetHTTP2(true)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.std.ServeTLS(ln, "", "")
		}()
		return nil
	}
	s.std.Protocols.SetUnencryptedHTTP2(true)
	s.fast = s.newFast()
	s.h2 = newChanListener(ln.Addr())
	if s.loops {
		if s.ev, err = startLoops(s, ln); err != nil {
			ln.Close()
			return fmt.Errorf("httpbin: %w", err)
		}
	} else {
		s.wg.Add(1)
		go s.acceptLoop(ln)
	}
	s.wg.Add(2)
	go s.reap()
	go func() {
		defer s.wg.Done()
		s.std.Serve(s.h2)
	}()
	return nil
}

// Addr is the address the server listens on (the real port once started,
// when the configured one was 0).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Addr(s.cfg.Addr)
}

// Handler is the chi router: every endpoint on net/http, counted and capped
// like the server's own, for mounting in another http.Server.
func (s *Server) Handler() http.Handler { return s.router }

// Served counts the responses served so far, except those of /healthz and
// /stats. A client has its response only after it was counted.
func (s *Server) Served() uint64 { return s.counts.total() }

// Close stops the listener, closes every connection, ends waiting /delay
// requests and waits for the server's goroutines to end (those net/http
// runs per h2 or TLS connection end just after, their connections closed).
// It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	already, err := s.state.Close()
	if already {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	close(s.done)
	if s.h2 != nil {
		s.h2.Close()
	}
	ev := s.ev
	s.mu.Unlock()

	if ev != nil {
		if cerr := ev.close(); err == nil {
			err = cerr // no connection is handed over from here on
		}
	}
	s.mu.Lock()
	conns := make([]*sniffConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if s.std != nil {
		s.std.Close()
	}
	if s.h3 != nil {
		s.h3.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	if s.caller != nil {
		s.caller.close()
	}
	return err
}

// track registers c, or reports false when the server is closed.
func (s *Server) track(c *sniffConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *sniffConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.limit.Release()
}

// capListener admits (MaxConns) the connections net/http serves over TLS.
type capListener struct {
	net.Listener
	s *Server
}

func (l capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.s.limit.Admit() {
			return &capConn{Conn: c, s: l.s}, nil
		}
		c.Close()
	}
}

// capConn is an admitted connection: no longer active once closed.
type capConn struct {
	net.Conn
	s      *Server
	closed atomic.Bool
}

func (c *capConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.s.limit.Release()
	}
	return c.Conn.Close()
}

// Accepted counts the connections accepted (rejected ones included).
func (s *Server) Accepted() uint64 { return s.limit.Accepted() }

// Rejected counts the connections closed at once because MaxConns were open.
func (s *Server) Rejected() uint64 { return s.limit.Rejected() }

// Active is the number of connections open now (on the loops and handed over).
func (s *Server) Active() int64 { return s.limit.Active() }
