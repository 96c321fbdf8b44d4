// Package tcpecho is the raw TCP target for netperf-style measurements
// (TCP_RR, TCP_CRR, TCP_STREAM). One port serves two kinds of connection:
//
//   - a sink: a connection whose first bytes are SinkMagic. Everything after
//     the magic is read and discarded (TCP_STREAM); nothing is ever written.
//   - an echo: any other connection. Every byte read is written back, in
//     order, the first bytes included, so netcat- or socat-style clients work
//     as well as loadgen's own (TCP_RR, TCP_CRR).
//
// The server knows nothing of message boundaries: it echoes what each read
// returned with one write. To tell the two apart it waits only while the
// bytes so far are a proper prefix of SinkMagic, so an echo client is
// answered at once unless its first message is such a prefix (a lone "L").
package tcpecho

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"loadgen/targets/accept"
)

// SinkMagic opens a sink connection. loadgen's tcp-stream mode sends it
// right after connecting; the bytes after it are counted by Sunk.
const SinkMagic = "LOADGEN-SINK/1\r\n"

// DefaultAddr is where the server listens when Config.Addr is empty.
const DefaultAddr = "127.0.0.1:0"

// Config configures a Server.
type Config struct {
	Addr     string // host:port to listen on; empty means DefaultAddr
	MaxConns int    // most connections served at once; 0 means no limit. Beyond it a new connection is closed at once.
	// Loops is how many event loops serve (Linux); 0 means GOMAXPROCS.
	// Given fewer than GOMAXPROCS, so that a P is left for the rest of
	// the process, the loops wait for events keeping their Ps, as the
	// generator's do: no trip through the netpoller per request.
	Loops int
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if c.MaxConns < 0 {
		return fmt.Errorf("tcpecho: max connections must be 0 (no limit) or more, not %d", c.MaxConns)
	}
	if c.Loops < 0 {
		return fmt.Errorf("tcpecho: loops must be 0 (GOMAXPROCS) or more, not %d", c.Loops)
	}
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("tcpecho: listen address %q: want host:port", c.Addr)
		}
	}
	return nil
}

// Alone is c for a process that serves nothing but this target (loadgen
// serve tcp): a loop per processor, and GOMAXPROCS raised by one, so that
// a P is left for the rest of the process and the loops wait keeping
// theirs (Loops): no trip through the netpoller per round trip. restore
// puts GOMAXPROCS back.
func (c Config) Alone() (alone Config, restore func()) {
	c.Loops = runtime.GOMAXPROCS(0)
	before := runtime.GOMAXPROCS(c.Loops + 1)
	return c, func() { runtime.GOMAXPROCS(before) }
}

// Server is a TCP echo and sink server. Its counters are safe to read at
// any time.
//
// On Linux it serves with event loops, one per GOMAXPROCS unless told
// (Config.Loops): non-blocking
// sockets in an epoll set per loop, each read echoed with one write, no
// goroutine per connection (loop_linux.go). Elsewhere it runs a goroutine
// per connection (goroutines.go); both behave the same, and are tested by
// the same tests.
type Server struct {
	cfg   Config
	loops bool // event loops; otherwise a goroutine per connection

	mu    sync.Mutex
	state accept.State // listener, started, closed: under mu
	wg    sync.WaitGroup

	// A goroutine per connection.
	done  chan struct{} // closed by Close
	conns map[net.Conn]struct{}

	// Event loops.
	ev *loops // set by Start

	limit  accept.Cap // MaxConns, on the loops and the goroutines alike
	echoed atomic.Uint64
	sunk   atomic.Uint64
}

// New checks cfg and returns a server that is not listening yet.
func New(cfg Config) (*Server, error) { return newServer(cfg, loopSupported) }

func newServer(cfg Config, loops bool) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	return &Server{cfg: cfg, limit: accept.Cap{Max: cfg.MaxConns}, loops: loops, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln, err := s.state.Listen("tcpecho", s.cfg.Addr)
	if err != nil {
		return err
	}
	if s.loops {
		if s.ev, err = startLoops(s, ln); err != nil {
			ln.Close()
			return fmt.Errorf("tcpecho: %w", err)
		}
		return nil
	}
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Addr is the address the server listens on (the real port once started,
// when the configured one was 0).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Addr(s.cfg.Addr)
}

// Close stops the listener, closes every connection and waits for all the
// server's goroutines to end. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	already, err := s.state.Close()
	if already {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	close(s.done)
	for c := range s.conns {
		c.Close()
	}
	ev := s.ev
	s.mu.Unlock()
	if ev != nil {
		if cerr := ev.close(); err == nil {
			err = cerr
		}
	}
	s.wg.Wait()
	return err
}

// Accepted counts the connections accepted (rejected ones included).
func (s *Server) Accepted() uint64 { return s.limit.Accepted() }

// Rejected counts the connections closed at once because MaxConns were open.
func (s *Server) Rejected() uint64 { return s.limit.Rejected() }

// Echoed counts the bytes written back by echo connections.
func (s *Server) Echoed() uint64 { return s.echoed.Load() }

// Sunk counts the bytes received by sink connections after SinkMagic.
func (s *Server) Sunk() uint64 { return s.sunk.Load() }

// Active is the number of connections being served now.
func (s *Server) Active() int64 { return s.limit.Active() }
