package httpbin

import (
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/targets/evloop"
)

// loopSupported is true: Linux has epoll.
const loopSupported = true

// The event loops of plaintext HTTP/1.1: a loop per GOMAXPROCS, each an
// epoll set of its connections and the listening socket (targets/evloop).
// A loop reads what a connection sent into its one buffer, parses each
// request head (head.go) and answers the hot endpoints itself — /bytes/{n},
// /status/{code}, /healthz, /stats, 404 and 405 — every answer of a read in
// one write, its head made by fasthttp and kept (heads.go). The first
// request it does not answer (a body, an echo, a /delay, HTTP/1.0, an odd
// header, the HTTP/2 preface) hands the connection over, with the bytes
// read so far, to fasthttp or net/http's h2c (adopt), which serve it from
// then on as they serve any connection.

type loops struct {
	g  *evloop.Group
	ls []*loop
}

// tagListener tags the listening socket's events; a connection's carry
// its index in loop.conns.
const tagListener = -1

// Bounds of one loop's work per event.
const (
	acceptBatch = 64
	readBufSize = 64 << 10
	// bigBody is the size beyond which a body is written from where it is
	// (the /bytes buffer) with writev rather than copied behind its head.
	bigBody = 16 << 10
)

type loop struct {
	s     *Server
	p     *evloop.Poller
	acc   *evloop.Acceptor
	conns []*hconn // by index; a closed one (fd < 0) is reused
	free  []int32  // indexes of closed conns
	in    []byte   // readBufSize: what a read brought
	out   []byte   // the answers to one read, written at once
	h     head
	heads heads
	sec   int64 // the batch's second, for Date

	tick    int64         // advanced every tickLen
	tickLen time.Duration // IdleTimeout / idleTicks
	sweepAt time.Time     // the next tick
}

type hconn struct {
	fd      int
	index   int32
	sniffed bool  // past the HTTP/2 preface check
	since   int64 // the loop's tick at the last read
	in      []byte
	pend    []byte // answer bytes the socket did not take yet, then
	body    []byte // a big body's rest (a slice of the /bytes buffer)
	closing bool   // close once the answer is written (Connection: close)
}

func startLoops(s *Server, ln net.Listener) (*loops, error) {
	g, err := evloop.NewGroup(ln, runtime.GOMAXPROCS(0), 256, tagListener)
	if err != nil {
		return nil, err
	}
	ev := &loops{g: g}
	tickLen := max(s.cfg.IdleTimeout/idleTicks, time.Millisecond)
	for i := range g.Len() {
		p, acc := g.Loop(i)
		ev.ls = append(ev.ls, &loop{s: s, p: p, acc: acc, in: make([]byte, readBufSize),
			tickLen: tickLen, sweepAt: time.Now().Add(tickLen)})
	}
	g.Go(func(i int) { ev.ls[i].run() })
	return ev, nil
}

// close stops the loops, which close their connections, then the
// listening socket. Connections handed over are the server's to close.
func (ev *loops) close() error { return ev.g.Close() }

func (l *loop) run() {
	defer l.closeAll()
	for {
		if l.p.Run(evloop.Earliest(l.acc.Due(), l.sweepAt), l.handle) != nil {
			return // closed (or the set is unusable: nothing to serve with)
		}
		now := time.Now()
		l.sweep(now)
		if l.acc.Resume(now) != nil {
			return
		}
	}
}

// handle serves a batch of events; it reports whether every socket of it
// was left drained (see evloop.Poller.Run).
func (l *loop) handle(evs []unix.EpollEvent) bool {
	now := time.Now()
	l.sec = now.Unix()
	l.sweep(now) // a loop that never runs dry sweeps too
	drained := true
	for i := range evs {
		ev := &evs[i]
		if ev.Pad == tagListener {
			drained = l.accept() && drained
			continue
		}
		// An event of a connection closed earlier in the batch may reach
		// the next one given its index, even its fd: then it is spurious,
		// and a read or write that finds nothing to do does nothing.
		c := l.conns[ev.Pad]
		switch {
		case c.fd < 0:
		case len(c.pend)+len(c.body) > 0:
			drained = l.flush(c) && drained
		default:
			drained = l.read(c, ev.Events) && drained
		}
	}
	return drained
}

// accept takes the pending connections, up to acceptBatch; true when it
// took them all.
func (l *loop) accept() bool {
	for range acceptBatch {
		fd, _, ok := l.acc.Next()
		if !ok {
			return true
		}
		if !l.s.limit.Admit() {
			evloop.Close(fd)
			continue
		}
		c := l.conn(fd)
		if l.p.Add(fd, evloop.Readable, c.index) != nil {
			l.drop(c)
		}
	}
	return false
}

// conn gives fd a conn, reusing a closed one.
func (l *loop) conn(fd int) *hconn {
	var c *hconn
	if n := len(l.free); n > 0 {
		c = l.conns[l.free[n-1]]
		l.free = l.free[:n-1]
	} else {
		c = &hconn{index: int32(len(l.conns))}
		l.conns = append(l.conns, c)
	}
	c.fd, c.sniffed, c.since, c.closing = fd, false, l.tick, false
	return c
}

// release frees c's index; its fd is closed or handed over.
func (l *loop) release(c *hconn) {
	c.fd, c.pend, c.body = -1, c.pend[:0], nil
	c.in = c.in[:0]
	if cap(c.in) > bigBody {
		c.in = nil
	}
	if cap(c.pend) > bigBody {
		c.pend = nil
	}
	l.free = append(l.free, c.index)
}

// drop closes c.
func (l *loop) drop(c *hconn) {
	evloop.Close(c.fd)
	l.release(c)
	l.s.limit.Release()
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		if c.fd >= 0 {
			l.drop(c)
		}
	}
}

// sweep closes, once a tick, the connections silent for IdleTimeout: no
// byte read for more than idleTicks ticks (and no answer waiting to be
// written), as the reaper does for fasthttp's.
func (l *loop) sweep(now time.Time) {
	if now.Before(l.sweepAt) {
		return
	}
	l.tick++
	l.sweepAt = now.Add(l.tickLen)
	for _, c := range l.conns {
		if c.fd >= 0 && len(c.pend)+len(c.body) == 0 && l.tick-c.since > idleTicks {
			l.drop(c)
		}
	}
}

// read reads what c sent, on an event of events, and serves it; true
// when c is drained (see evloop.Drained), waits to be writable, or is gone.
func (l *loop) read(c *hconn, events uint32) bool {
	buf := l.in
	if !c.sniffed {
		// No further than the HTTP/2 preface, as the goroutines' sniff:
		// net/http then reads what follows it from the socket.
		buf = buf[:len(preface)-len(c.in)]
	}
	n, err := evloop.Read(c.fd, buf)
	switch {
	case err == unix.EAGAIN:
		return true
	case err == unix.EINTR:
		return false
	case err != nil || n == 0:
		if n == 0 && c.sniffed && len(c.in) > 0 {
			// Gone within a request: fasthttp has its way of saying so.
			l.handoff(c, c.in, false)
			return true
		}
		l.drop(c)
		return true
	}
	c.since = l.tick
	drained := evloop.Drained(n, len(buf), events)
	data := buf[:n]
	if len(c.in) > 0 { // behind a partial head
		c.in = append(c.in, data...)
		data = c.in
	}
	return l.serve(c, data) || drained
}

// serve answers the requests in data, all read from c, and writes the
// answers. What is left unanswered — a partial head, or requests behind
// an answer the socket did not take whole — stays in c.in. True when c
// waits to be writable, was handed over or is closed.
func (l *loop) serve(c *hconn, data []byte) bool {
	l.out = l.out[:0]
	if !c.sniffed {
		k := min(len(data), len(preface))
		if string(data[:k]) == preface[:k] {
			if k == len(preface) {
				l.handoff(c, data, true)
				return true
			}
			c.in = append(c.in[:0], data...)
			return false
		}
		c.sniffed = true
	}
	for len(data) > 0 && !c.closing {
		n, v := parseHead(data, &l.h)
		var rt *route
		var param []byte
		if v == parsed {
			if rt, param, v = l.route(&l.h); v != parsed {
				v = foreign
			}
		}
		switch v {
		case needMore:
			c.in = append(c.in[:0], data...)
			return l.writeOut(c)
		case foreign:
			// Hand over once every answer before is written: fasthttp
			// writes from then on.
			if l.writeOut(c) {
				if c.fd >= 0 {
					c.in = append(c.in[:0], data...)
				}
				return true
			}
			l.handoff(c, data, false)
			return true
		}
		data = data[n:]
		if l.answer(c, &l.h, rt, param) { // a big body the socket did not take whole
			c.in = append(c.in[:0], data...)
			return true
		}
	}
	c.in = c.in[:0]
	if l.writeOut(c) {
		return true
	}
	if c.closing {
		l.drop(c)
		return true
	}
	return false
}

// route finds h's route; the verdict is parsed when the loop answers it
// itself. The echo endpoints and /delay are fasthttp's: what they say
// depends on fasthttp's view of the request, and a delay would hold the
// loop.
func (l *loop) route(h *head) (*route, []byte, verdict) {
	rt, param := l.s.routes.match(h.path)
	if rt == nil || !rt.allows(h.method) {
		return rt, param, parsed // 404, 405
	}
	switch rt.ep {
	case epBytes, epStatus, epHealthz, epStats:
		return rt, param, parsed
	}
	return rt, param, foreign
}

// answer appends the answer to h to l.out, as writeFast would have it
// written, and counts it. True when a big body was written with what
// came before it and the socket did not take all.
func (l *loop) answer(c *hconn, h *head, rt *route, param []byte) bool {
	rep := l.s.handle(rt, h.method, param, nil) // route: no endpoint that reads its source
	if !rep.quiet {
		l.s.counts.add(rep.status)
	}
	c.closing = h.close
	n := len(rep.body) + len(rep.text)
	l.out = append(l.out, l.heads.get(headKey{rep.status, rep.ctype, rep.allow, n, h.isHead, h.close}, l.sec)...)
	switch {
	case !sendsBody(rep.status, h.isHead):
	case len(rep.body) > bigBody && rep.req == nil: // the /bytes buffer, never written
		return l.writeBig(c, rep.body)
	case rep.body != nil:
		l.out = append(l.out, rep.body...)
	default:
		l.out = append(l.out, rep.text...)
	}
	if rep.req != nil {
		l.s.release(rep.req)
	}
	return false
}

// writeOut writes l.out; what the socket does not take waits on c. True
// when c now waits to be writable (or is gone).
func (l *loop) writeOut(c *hconn) bool {
	if len(l.out) == 0 {
		return false
	}
	n, err := evloop.Write(c.fd, l.out)
	return l.wrote(c, n, err, l.out, nil)
}

// writeBig writes l.out and body with one system call, body from where
// it is.
func (l *loop) writeBig(c *hconn, body []byte) bool {
	n, err := evloop.Writev(c.fd, l.out, body)
	return l.wrote(c, n, err, l.out, body)
}

// wrote deals with a write of a then b that wrote n bytes: the rest waits
// on c (a copied, b as it is), c waiting to be writable. True unless all
// was written.
func (l *loop) wrote(c *hconn, n int, err error, a, b []byte) bool {
	l.out = l.out[:0]
	if n == len(a)+len(b) {
		return false
	}
	if err != nil && err != unix.EAGAIN && err != unix.EINTR {
		l.drop(c)
		return true
	}
	k := min(n, len(a))
	c.pend = append(c.pend[:0], a[k:]...)
	c.body = b[n-k:]
	if l.p.Mod(c.fd, unix.EPOLLOUT, c.index) != nil {
		l.drop(c)
	}
	return true
}

// flush writes what waits on c; once all is written, c reads again and
// what it had read meanwhile is served. True while c still waits to be
// writable (or is gone).
func (l *loop) flush(c *hconn) bool {
	n, err := evloop.Writev(c.fd, c.pend, c.body)
	k := min(n, len(c.pend))
	c.pend, c.body = c.pend[k:], c.body[n-k:]
	if len(c.pend)+len(c.body) > 0 {
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			l.drop(c)
		}
		return true
	}
	c.pend, c.body = c.pend[:0], nil
	if c.closing {
		l.drop(c)
		return true
	}
	if l.p.Mod(c.fd, evloop.Readable, c.index) != nil {
		l.drop(c)
		return true
	}
	if len(c.in) > 0 {
		l.serve(c, c.in)
	}
	return false // bytes may have come while it was not read
}

// handoff gives c to the server's goroutines with the bytes it read so
// far (data), which they serve as they serve any connection.
func (l *loop) handoff(c *hconn, data []byte, h2 bool) {
	fd := c.fd
	l.p.Del(fd)
	f := os.NewFile(uintptr(fd), "httpbin")
	nc, err := net.FileConn(f) // a duplicate of fd, in the netpoller
	f.Close()
	read := append([]byte(nil), data...) // data may be c.in, released next
	l.release(c)
	if err != nil {
		l.s.limit.Release()
		return // the connection is lost as if its client had gone
	}
	l.s.adopt(nc, read, h2)
}
