// Package udpecho is the UDP target for netperf-style measurements
// (UDP_RR, UDP_STREAM). One port serves two kinds of peer, told apart by
// their source address:
//
//   - an echo: any datagram is sent back as it came (UDP_RR).
//   - a sink: a source that opened itself with Open. Its datagrams are
//     counted and discarded (UDP_STREAM); asked Count, the server answers
//     how many datagrams and bytes it received from that source, so that a
//     sender's loss is the receiver's truth. Close forgets the source.
//
// Control datagrams start with Control; a sender's data must not.
package udpecho

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
)

// The control exchange. A sink sender sends Control+Open and waits for
// Control+OK; at its end it sends Control+Count and waits for
// Control+"count D B" (D datagrams, B bytes), then Control+Close.
const (
	Control = "LOADGEN-UDP/1 "
	Open    = "open"
	OK      = "ok"
	Count   = "count"
	Close   = "close"
	Ping    = "ping" // answered OK, counted nowhere: a sender's probe
)

// readBuffer is the socket receive buffer asked for.
const readBuffer = 4 << 20

// DefaultAddr is where the server listens when Config.Addr is empty.
const DefaultAddr = "127.0.0.1:0"

// MaxSinks bounds the sources counted at once; past it, Open is refused
// (no answer), so that a sender's loss is never a guess.
const MaxSinks = 1 << 16

// Config configures a Server.
type Config struct {
	Addr string // host:port to listen on; empty means DefaultAddr
	// DropEvery drops every DropEvery-th data datagram (echoed or sunk),
	// not answering nor counting it: a known loss, to check a path's loss
	// accounting. 0 drops nothing.
	DropEvery int
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if c.DropEvery < 0 {
		return fmt.Errorf("udpecho: drop every %d: want 0 (drop nothing) or more", c.DropEvery)
	}
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("udpecho: listen address %q: want host:port", c.Addr)
		}
	}
	return nil
}

// Server is a UDP echo and sink. Its counters are safe to read at any time.
// One goroutine reads the socket, so a sink's count is in the order its
// datagrams came: a Count counts every datagram the kernel delivered before it.
type Server struct {
	cfg  Config
	mu   sync.Mutex
	conn *net.UDPConn
	done chan struct{}

	sinks map[netip.AddrPort]*sinkCount // read goroutine only

	seen      uint64 // data datagrams, for DropEvery; read goroutine only
	echoed    atomic.Uint64
	echoBytes atomic.Uint64
	sunk      atomic.Uint64
	sunkBytes atomic.Uint64
	dropped   atomic.Uint64
}

type sinkCount struct{ datagrams, bytes uint64 }

// New checks cfg and returns a server that is not listening yet.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	return &Server{cfg: cfg, sinks: map[netip.AddrPort]*sinkCount{}}, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		return errors.New("udpecho: already started")
	}
	pc, err := net.ListenPacket("udp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("udpecho: %w", err)
	}
	s.conn = pc.(*net.UDPConn)
	// A burst must not overflow the socket while the one reader is off
	// the CPU: the kernel caps this at net.core.rmem_max.
	s.conn.SetReadBuffer(readBuffer)
	s.done = make(chan struct{})
	go s.serve(s.conn, s.done)
	return nil
}

// Addr is the address the server listens on (the real port once started).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return s.cfg.Addr
	}
	return s.conn.LocalAddr().String()
}

// Close stops serving and waits for the read goroutine to end. It is safe
// to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	c, done := s.conn, s.done
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	err := c.Close()
	<-done
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Echoed counts the datagrams sent back to echo peers; EchoedBytes their bytes.
func (s *Server) Echoed() uint64      { return s.echoed.Load() }
func (s *Server) EchoedBytes() uint64 { return s.echoBytes.Load() }

// Sunk counts the data datagrams received from sinks; SunkBytes their bytes.
func (s *Server) Sunk() uint64      { return s.sunk.Load() }
func (s *Server) SunkBytes() uint64 { return s.sunkBytes.Load() }

// Dropped counts the data datagrams Config.DropEvery dropped.
func (s *Server) Dropped() uint64 { return s.dropped.Load() }

func (s *Server) serve(c *net.UDPConn, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 64<<10)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error (ICMP's refused on some systems)
		}
		p := buf[:n]
		if len(p) >= len(Control) && string(p[:len(Control)]) == Control { // compared, not converted: no allocation
			s.control(c, from, string(p[len(Control):]))
			continue
		}
		if s.drop() {
			continue
		}
		if sc, ok := s.sinks[from]; ok {
			sc.datagrams++
			sc.bytes += uint64(n)
			s.sunk.Add(1)
			s.sunkBytes.Add(uint64(n))
			continue
		}
		// Counted before it is sent: a peer that has its answer must find
		// it counted (a test, or a run reading the server's figures right
		// after its last answer). A send that fails takes it back.
		s.echoed.Add(1)
		s.echoBytes.Add(uint64(n))
		if _, err := c.WriteToUDPAddrPort(p, from); err != nil {
			s.echoed.Add(^uint64(0))
			s.echoBytes.Add(^uint64(n - 1))
		}
	}
}

// drop reports whether this data datagram is one DropEvery drops.
func (s *Server) drop() bool {
	if s.cfg.DropEvery == 0 {
		return false
	}
	s.seen++
	if s.seen%uint64(s.cfg.DropEvery) != 0 {
		return false
	}
	s.dropped.Add(1)
	return true
}

func (s *Server) control(c *net.UDPConn, from netip.AddrPort, msg string) {
	switch msg {
	case Open:
		if _, ok := s.sinks[from]; !ok {
			if len(s.sinks) >= MaxSinks {
				return
			}
			s.sinks[from] = &sinkCount{}
		}
		c.WriteToUDPAddrPort([]byte(Control+OK), from)
	case Count:
		sc, ok := s.sinks[from]
		if !ok {
			return // not a sink: its sender cannot be told a count
		}
		c.WriteToUDPAddrPort([]byte(Control+Count+" "+strconv.FormatUint(sc.datagrams, 10)+" "+strconv.FormatUint(sc.bytes, 10)), from)
	case Close:
		delete(s.sinks, from)
	case Ping:
		c.WriteToUDPAddrPort([]byte(Control+OK), from)
	}
}
