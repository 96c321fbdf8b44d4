package loadgen

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"

	"loadgen/loadgen/protocol"
)

// A connection's life on its loop: connect, send, read what is ready into
// its Session, complete or fail the request, and what comes next (the
// next request, a reconnect, a backoff). The loop itself (loop_linux.go)
// waits, dispatches events here and keeps the clock.

// connect starts a connection for c. forReq: a request waits for it. False
// when the socket could not even be made (then counted as a failure).
func (l *loop) connect(c *lconn, now time.Time, forReq bool) bool {
	c.connStart, c.forReq = now, forReq
	fd, err := l.sd.Socket()
	if err == nil {
		if err = l.watch(fd, unix.EPOLLOUT, c.index, unix.EPOLL_CTL_ADD); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		l.connectFailed(c, now)
		return false
	}
	if l.stamps && !stampReads(fd) {
		l.stamps = false // answers are timed when read, and wake the loop
	}
	c.fd, c.state = fd, stConnecting
	l.setEvents(c, unix.EPOLLOUT)
	c.deadline = now.Add(l.e.cfg.Timeout.D())
	l.flight(c)
	return true
}

// connected handles a connecting socket that became writable. A request
// that connects its own connection (NewConn, per-request) keeps its place
// in the flight list: its deadline counts from the connect's start, as the
// connect's did, and requests sent during a slow connect have later ones.
func (l *loop) connected(c *lconn, now time.Time) {
	if !c.forReq || !l.newConn {
		l.unflight(c)
	}
	if err := protocol.SocketError(c.fd); err != nil {
		l.unflight(c)
		l.drop(c)
		l.connectFailed(c, now)
		return
	}
	if err := l.watch(c.fd, unix.EPOLLIN, c.index, unix.EPOLL_CTL_MOD); err != nil {
		l.unflight(c)
		l.drop(c)
		l.connectFailed(c, now)
		return
	}
	l.setEvents(c, unix.EPOLLIN)
	c.connected = true
	c.state = stIdle
	measuring := !c.prefetch && !c.connStart.Before(l.e.measure)
	l.shard.dialed(now.Sub(c.connStart), nil, measuring)
	c.prefetch = false
	c.backoff = 0
	if c.thenNext {
		c.thenNext = false
		l.inFlight--
		l.ready = append(l.ready, c)
		return
	}
	if c.forReq {
		c.forReq = false
		start := c.sent // NewConn, per-request: the connect is part of the request
		if !l.newConn {
			start = now // a kept-alive request starts when it is sent
		}
		l.send(c, start, now)
	}
}

// connectFailed counts a failed connect and decides what c does next.
func (l *loop) connectFailed(c *lconn, now time.Time) {
	e := l.e
	c.state = stIdle
	if c.prefetch {
		c.prefetch = false
		l.shard.dialed(0, errConnect, false)
		return
	}
	forReq := c.forReq
	c.forReq = false
	if forReq && l.newConn {
		// tcp-crr, --new-conn: the connect is the request's first part, so
		// its failure fails the request.
		l.shard.dialedErr(now.Sub(c.connStart), errConnect, !c.connStart.Before(e.measure), false)
		o := protocol.Outcome{Err: protocol.Connect}
		l.after(c, &o, e.settle(l.shard, c.count, &c.request, &o, now, true), now)
		return
	}
	if forReq || c.thenNext {
		l.inFlight-- // no request was sent
		c.thenNext = false
	}
	l.shard.dialed(now.Sub(c.connStart), errConnect, !c.connStart.Before(e.measure))
	if e.pacer == nil {
		var wait time.Duration
		c.backoff, wait = e.nextBackoff(c.backoff)
		c.retryAt, c.state = now.Add(wait), stBackoff
		l.backoffs = append(l.backoffs, c)
		return
	}
	l.freed(c, now) // open loop: the request is lost (never sent); the connection waits for the next
}

var errConnect = errors.New("connect failed")

// next starts c's next request, closed loop.
func (l *loop) next(c *lconn, now time.Time) {
	e := l.e
	if e.stopping.Load() || l.exhausted {
		return
	}
	if !e.end.IsZero() && !now.Before(e.end) {
		l.exhausted = true
		return
	}
	if c.g != nil {
		l.muxNext(c, now)
		return
	}
	if c.fd < 0 && !l.newConn {
		// A kept-alive connection is opened before a request is taken: a
		// connect that fails costs no request (-n stays exact) and is
		// tried again after a backoff.
		l.inFlight++
		c.thenNext = true
		l.connect(c, now, false)
		return
	}
	i := e.next.Add(1) - 1
	if n := uint64(e.cfg.Requests); n > 0 && i >= n {
		l.exhausted = true
		return
	}
	c.pick, c.first = e.pick(i), time.Time{}
	l.begin(c, now)
}

// begin sends c's request now, connecting first where needed.
func (l *loop) begin(c *lconn, now time.Time) {
	l.inFlight++
	if c.g != nil {
		l.muxBegin(c, now)
		return
	}
	if c.fd < 0 || l.newConn {
		if c.fd >= 0 {
			l.drop(c)
		}
		if l.newConn {
			c.try(now) // the connect is the request's first part
		}
		l.connect(c, now, true)
		return
	}
	l.send(c, now, now)
}

// send writes c's request; start is when its try started (now; with a
// connect per request, at the connect).
func (l *loop) send(c *lconn, start, now time.Time) {
	c.try(start)
	if l.e.mix != nil {
		if c.pk == nil {
			c.pk = c.s.(protocol.Picker) // once: a type assertion may allocate
		}
		c.pk.Pick(int(c.pick))
	}
	c.req, c.wrote, c.read = c.s.Request(), 0, 0
	if d := start.Add(l.e.cfg.Timeout.D()); !c.inList || !d.Equal(c.deadline) {
		c.deadline = d
		l.flight(c)
	} // else in its connect's place (connected), with this very deadline
	c.state = stWriting
	l.write(c, now)
}

// write writes what is left of c's request.
func (l *loop) write(c *lconn, now time.Time) {
	for c.wrote < len(c.req) {
		n, err := rawWrite(c.fd, c.req[c.wrote:])
		if n > 0 {
			c.wrote += n
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if c.events&unix.EPOLLOUT == 0 {
				l.setEvents(c, unix.EPOLLIN|unix.EPOLLOUT)
				l.watch(c.fd, c.events, c.index, unix.EPOLL_CTL_MOD)
			}
			return
		case err != nil:
			l.fail(c, protocol.Write, now)
			return
		}
	}
	if c.events&unix.EPOLLOUT != 0 {
		l.setEvents(c, unix.EPOLLIN)
		l.watch(c.fd, c.events, c.index, unix.EPOLL_CTL_MOD)
	}
	c.state = stReading
	if _, done, o := c.s.Response(nil); done {
		l.complete(c, &o, now)
	}
}

// event handles one epoll event.
func (l *loop) event(ev *unix.EpollEvent, now time.Time) {
	switch ev.Pad {
	case evWake:
		l.drainWake()
		if l.opener != nil {
			l.takeOpened(now)
		}
		return
	}
	if ev.Pad <= evSock0 {
		if s := l.socks[evSock0-ev.Pad]; s != nil {
			l.sockEvent(s, ev.Events, now)
		}
		return
	}
	c := l.conns[ev.Pad]
	switch c.state {
	case stConnecting:
		l.connected(c, now)
	case stWriting:
		if ev.Events&unix.EPOLLIN != 0 {
			// The answer began before the request was all written (the
			// echo of a payload larger than the socket buffers): read it,
			// or each side waits for the other to read.
			l.readable(c, now)
			if c.state != stWriting {
				return
			}
		} else if ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.fail(c, protocol.Write, now)
			return
		}
		l.write(c, now)
	case stReading:
		l.readable(c, now)
	case stIdle:
		l.idleEvent(c)
	}
}

func (l *loop) drainWake() {
	var b [8]byte
	unix.Read(l.wake, b[:])
}

// readable reads c's answer: one read per event (epoll is level-triggered:
// what is left is reported again), fed to the Session. An answer timed by
// the kernel (loop.stamps) counts as done when its last bytes arrived, and
// is read on while reads fill the buffer: a loop that sleeps past answers
// sees the rest at its next wake-up only.
func (l *loop) readable(c *lconn, now time.Time) {
	if !l.stamps {
		n, err := rawRead(c.fd, l.buf)
		l.took(c, n, err, now)
		return
	}
	for range maxStampedReads {
		n, ns, err := rawReadStamped(c.fd, l.buf, l.oob[:])
		l.took(c, n, err, arrived(now, ns, c.sent))
		if n < len(l.buf) || c.fd < 0 || (c.state != stReading && c.state != stWriting) {
			return
		}
	}
}

// maxStampedReads bounds the reads of one answer per wake-up (4 MiB), so
// that one large answer does not hold back the sends.
const maxStampedReads = 64

// readSolo reads the solo connection's answer without waiting for an
// event: a blocking read, which ends when bytes come (or the peer's end,
// or an error) and then reports true, or after the socket's receive
// timeout or at a signal, reporting false: the loop then waits for events
// as for any connection. One system call fewer per request than a wait
// and a read, as a blocking client (sockperf, netperf) makes.
func (l *loop) readSolo(c *lconn) bool {
	n, err := heldp.Recv(c.fd, l.buf)
	if err == unix.EAGAIN || err == unix.EINTR {
		return false
	}
	l.took(c, n, err, time.Now())
	return true
}

// took hands what a read of c's answer gave to its Session.
func (l *loop) took(c *lconn, n int, err error, now time.Time) {
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.fail(c, protocol.Read, now)
		return
	case n == 0:
		o := c.s.Closed()
		o.Bytes = max(o.Bytes, c.read)
		l.complete(c, &o, now)
		return
	}
	c.read += int64(n)
	used, done, o := c.s.Response(l.buf[:n])
	if !done {
		return
	}
	if used < n { // more than one answer to one request
		o.Err, o.Done = protocol.Protocol, true
	}
	if c.wrote < len(c.req) { // answered before it was all sent: the rest cannot follow
		o.Done = true
	}
	l.complete(c, &o, now)
}

// idleEvent handles a connection with no request in flight that became
// readable:
// the peer closed it (keep-alive timeout), or sent what nothing asked for.
func (l *loop) idleEvent(c *lconn) {
	_, err := rawRead(c.fd, l.buf)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	l.drop(c) // the next request connects anew
}

// fail ends c's request with a socket error.
func (l *loop) fail(c *lconn, class protocol.ErrClass, now time.Time) {
	o := protocol.Outcome{Err: class, Done: true, Bytes: c.read, Written: int64(c.wrote)}
	l.complete(c, &o, now)
}

// complete settles c's request (settle: the engine's rules) and sends
// its next one.
func (l *loop) complete(c *lconn, o *protocol.Outcome, now time.Time) {
	l.unflight(c)
	done := now
	if !l.answered.IsZero() && l.answered.Before(now) {
		done = l.answered // read after a pause, timed by the kernel
	}
	l.after(c, o, l.e.settle(l.shard, c.count, &c.request, o, done, l.newConn), now)
}

// after decides what becomes of c once its request ended: drop, settle's
// verdict on its connection. A member of a multiplexed connection leaves
// the socket to its state instead: a stream's failure does not break it.
func (l *loop) after(c *lconn, o *protocol.Outcome, drop bool, now time.Time) {
	l.inFlight--
	l.ends++
	c.state = stIdle
	switch {
	case c.g != nil:
		l.muxAfter(c, o, now)
	case drop:
		l.drop(c)
	case l.soloOK && l.solo == nil:
		l.goSolo(c)
	}
	if l.e.pacer == nil {
		l.ready = append(l.ready, c)
		return
	}
	l.freed(c, now)
}

// freed returns c to the open loop's idle connections.
func (l *loop) freed(c *lconn, now time.Time) {
	c.state = stIdle
	l.idle = append(l.idle, c)
}

// drop closes c's socket.
func (l *loop) drop(c *lconn) {
	if c == l.solo {
		l.solo = nil
	}
	if c.fd >= 0 {
		unix.Close(c.fd) // leaves the epoll set with it
		c.fd = -1
	}
	l.setEvents(c, 0)
}
