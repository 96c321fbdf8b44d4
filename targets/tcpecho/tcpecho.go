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
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if c.MaxConns < 0 {
		return fmt.Errorf("tcpecho: max connections must be 0 (no limit) or more, not %d", c.MaxConns)
	}
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("tcpecho: listen address %q: want host:port", c.Addr)
		}
	}
	return nil
}

// Server is a TCP echo and sink server. Its counters are safe to read at
// any time.
type Server struct {
	cfg  Config
	done chan struct{} // closed by Close

	mu    sync.Mutex
	state accept.State // listener, started, closed: under mu
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup

	accepted atomic.Uint64
	rejected atomic.Uint64
	echoed   atomic.Uint64
	sunk     atomic.Uint64
	active   atomic.Int64
}

// New checks cfg and returns a server that is not listening yet.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	return &Server{cfg: cfg, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln, err := s.state.Listen("tcpecho", s.cfg.Addr)
	if err != nil {
		return err
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
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Accepted counts the connections accepted (rejected ones included).
func (s *Server) Accepted() uint64 { return s.accepted.Load() }

// Rejected counts the connections closed at once because MaxConns were open.
func (s *Server) Rejected() uint64 { return s.rejected.Load() }

// Echoed counts the bytes written back by echo connections.
func (s *Server) Echoed() uint64 { return s.echoed.Load() }

// Sunk counts the bytes received by sink connections after SinkMagic.
func (s *Server) Sunk() uint64 { return s.sunk.Load() }

// Active is the number of connections being served now.
func (s *Server) Active() int64 { return s.active.Load() }

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	accept.Loop(ln, s.done, func(c net.Conn) {
		s.accepted.Add(1)
		if !s.track(c) {
			c.Close()
			return
		}
		go s.serve(c)
	})
}

// track registers c, or reports false when the server is closed or full.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Closed {
		return false
	}
	if s.cfg.MaxConns > 0 && len(s.conns) >= s.cfg.MaxConns {
		s.rejected.Add(1)
		return false
	}
	s.conns[c] = struct{}{}
	s.active.Add(1)
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Add(-1)
	s.wg.Done()
}
