package httpbin

import (
	"loadgen/targets/accept"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// One plaintext port, two servers: each accepted connection is sniffed in
// its own goroutine. One that opens with the HTTP/2 client preface goes to
// net/http (h2c with prior knowledge) through a channel-backed listener;
// any other is served by fasthttp (HTTP/1.1) in that same goroutine. The
// sniffed bytes are replayed to whichever server gets the connection.

const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	accept.Loop(ln, s.done, func(c net.Conn) {
		if !s.limit.Admit() {
			c.Close()
			return
		}
		sc := &sniffConn{Conn: c, s: s}
		if !s.track(sc) {
			c.Close()
			s.limit.Release()
			return
		}
		s.wg.Add(1)
		go s.sniff(sc)
	})
}

// sniff reads until the first bytes either differ from the HTTP/2 preface
// or are all of it, then serves c as HTTP/1.1 or hands it to net/http. A
// client that sends nothing for IdleTimeout is closed.
func (s *Server) sniff(c *sniffConn) {
	defer s.wg.Done()
	c.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	n, h2 := 0, false
	for {
		k, err := c.Conn.Read(c.buf[n:])
		n += k
		if string(c.buf[:n]) != preface[:n] {
			break // HTTP/1.x, or garbage for fasthttp to answer
		}
		if n == len(preface) {
			h2 = true
			break
		}
		if err != nil {
			c.Close() // gone, or silent, while still a prefix of the preface
			return
		}
	}
	c.peek = c.buf[:n]
	c.SetReadDeadline(time.Time{})
	s.serveSniffed(c, h2)
}

// serveSniffed serves c, whose first bytes are in c.peek, as HTTP/1.1
// (fasthttp, in this goroutine) or hands it to net/http's h2c.
func (s *Server) serveSniffed(c *sniffConn, h2 bool) {
	if !h2 {
		c.reaped = true
		s.fast.ServeConn(c) // returns when c is done, having closed it
		return
	}
	if !s.h2.put(c) {
		c.Close()
	}
}

// adopt serves a connection an event loop hands over, with the bytes it
// read already: the HTTP/2 preface (h2) or HTTP/1.x from a request the
// loop does not answer itself on.
func (s *Server) adopt(c net.Conn, read []byte, h2 bool) {
	s.adopted.Add(1)
	sc := &sniffConn{Conn: c, s: s}
	if !s.track(sc) {
		c.Close()
		s.limit.Release() // admitted by the loop that accepted it
		return
	}
	sc.peek = append([]byte(nil), read...)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.serveSniffed(sc, h2)
	}()
}

// sniffConn is an accepted plaintext connection: it replays the sniffed
// bytes, tells the reaper when it waits (HTTP/1.1) and untracks itself on
// Close.
type sniffConn struct {
	net.Conn
	s         *Server
	buf       [len(preface)]byte
	peek      []byte       // sniffed bytes not yet read
	reaped    bool         // HTTP/1.1: idle time watched by the reaper
	readSince atomic.Int64 // the reaper's tick when Read began; 0 outside Read
	closed    atomic.Bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	if len(c.peek) > 0 {
		n := copy(p, c.peek)
		c.peek = c.peek[n:]
		return n, nil
	}
	if !c.reaped {
		return c.Conn.Read(p)
	}
	c.readSince.Store(c.s.tick.Load())
	n, err := c.Conn.Read(p)
	c.readSince.Store(0)
	return n, err
}

func (c *sniffConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.s.untrack(c)
	}
	return err
}

// NetConn is the TCP connection underneath, as in tls.Conn.
func (c *sniffConn) NetConn() net.Conn { return c.Conn }

// chanListener is a net.Listener whose connections come from put.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to Accept; false when the listener is closed.
func (l *chanListener) put(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed // http.Server.Serve takes this as "stop"
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }
