package loadgen

import (
	"time"

	"loadgen/loadgen/protocol"
)

// Multiplexed connections on a loop (h2c): Streams of the loop's
// connections (lconns) form a group that shares one socket, each on a
// slot of its protocol.Mux, as the goroutine driver's Dials share an
// HTTP/2 connection. A request is still an lconn's: in the flight list by
// deadline, recorded and followed by the next as on any connection. The
// socket is the group's: opened when a member first needs it (its
// handshake before the member's request starts, as a Dial's is), read
// when readable, written once per turn with what every member started
// (one write for all the streams ready at once), replaced when it stops
// taking requests (GOAWAY, a failure) and closed once its last request
// ended (loop_msock_linux.go).

// mgroup is the lconns that share a socket.
type mgroup struct {
	members []*lconn // slot k is members[k]
	cur     *msock   // the socket new requests go to; nil: open one
	backoff time.Duration
}

// muxNext is next (closed loop) for a member: the request is taken once
// the group's socket is Ready, so that a connect that fails costs no
// request.
func (l *loop) muxNext(c *lconn, now time.Time) {
	s := l.muxCurrent(c.g, now)
	if s.state != msReady {
		l.inFlight++
		c.thenNext = true
		l.waitOn(s, c)
		return
	}
	e := l.e
	i := e.next.Add(1) - 1
	if n := uint64(e.cfg.Requests); n > 0 && i >= n {
		l.exhausted = true
		return
	}
	c.pick, c.first = e.pick(i), time.Time{}
	l.inFlight++
	l.muxStart(s, c, now)
}

// muxBegin is begin for a member: the request goes on the group's socket
// once it is Ready (open loop; a resend).
func (l *loop) muxBegin(c *lconn, now time.Time) {
	s := l.muxCurrent(c.g, now)
	if s.state != msReady {
		l.waitOn(s, c)
		return
	}
	l.muxStart(s, c, now)
}

// waitOn makes c wait for s: to be Ready, or for a stream.
func (l *loop) waitOn(s *msock, c *lconn) {
	c.wait = s
	s.waiting = append(s.waiting, c)
}

// takeWaiting empties s's waiting list and returns it.
func (l *loop) takeWaiting(s *msock) []*lconn {
	w := s.waiting
	s.waiting = nil
	for _, c := range w {
		c.wait = nil
	}
	return w
}

// muxCurrent is g's socket for a new request, opened if need be.
func (l *loop) muxCurrent(g *mgroup, now time.Time) *msock {
	s := g.cur
	if s == nil || s.state == msClosed || (s.state == msReady && !s.m.Usable()) {
		if s != nil && s.state != msClosed && s.inFlight == 0 {
			l.sockClose(s, now)
			if c := g.cur; c != nil && c != s {
				return c // opened for a request that waited on s
			}
		}
		s = l.muxSocket(g, now)
	}
	return s
}

// muxStart starts c's request on s (Ready). Its clock starts at its first
// try (a wait for a stream is part of its latency, within its timeout, as
// on goroutines).
func (l *loop) muxStart(s *msock, c *lconn, now time.Time) {
	if !c.inList {
		c.try(now)
		c.deadline = now.Add(l.e.cfg.Timeout.D())
		l.flight(c)
	}
	if l.e.mix != nil {
		if s.mp == nil {
			s.mp = s.m.(protocol.MuxPicker) // once: a type assertion may allocate
		}
		s.mp.Pick(int(c.slot), int(c.pick))
	}
	how, o := s.m.Start(int(c.slot))
	switch how {
	case protocol.MuxLater:
		l.waitOn(s, c)
		return
	case protocol.MuxRefused:
		l.muxEnded(c, &o, now)
		return
	}
	c.ms = s
	s.inFlight++
	c.state = stReading
	l.markDirty(s)
}

// startWaiting starts the requests waiting for s, while it takes them.
func (l *loop) startWaiting(s *msock, now time.Time) {
	if s.state != msReady || len(s.waiting) == 0 {
		return
	}
	w := l.takeWaiting(s)
	for i, c := range w {
		if c.thenNext {
			c.thenNext = false
			l.inFlight--
			l.ready = append(l.ready, c)
			continue
		}
		if s.state != msReady || !s.m.Usable() {
			// Gone or going away meanwhile: the rest go to a new socket.
			for _, c := range w[i:] {
				l.rewait(c, now)
			}
			return
		}
		l.muxStart(s, c, now)
	}
}

// muxEnded ends c's request: resent when the peer did not process it,
// recorded otherwise.
func (l *loop) muxEnded(c *lconn, o *protocol.Outcome, now time.Time) {
	if s := c.ms; s != nil {
		c.ms = nil
		s.inFlight--
		if s != s.g.cur && s.inFlight == 0 && s.state != msClosed {
			defer l.sockClose(s, now)
		}
	}
	c.state = stIdle
	if o.Unsent && c.resends < maxResends {
		// Not processed (GOAWAY): sent again on a new connection, as a
		// real client does (at the run's end too: it was taken); closed
		// loop, its latency starts anew.
		l.unflight(c)
		c.resends++
		l.muxBegin(c, now) // its try starts anew (muxStart)
		return
	}
	c.resends = 0
	l.complete(c, o, now)
}

// muxAfter is after's part for a member: the socket stays (a stream's
// failure does not break it); a request that says the connection takes
// no more makes the next one open a new socket.
func (l *loop) muxAfter(c *lconn, o *protocol.Outcome, now time.Time) {
	if o.Done {
		if s := c.g.cur; s != nil && s.state == msReady && !s.m.Usable() {
			c.g.cur = nil
			if s.inFlight == 0 {
				l.sockClose(s, now)
			}
		}
	}
}

// muxExpire times out a member's request: in flight, its stream is reset;
// waiting for a stream, it leaves the queue.
func (l *loop) muxExpire(c *lconn, now time.Time) {
	c.resends = 0
	if s := c.wait; s != nil {
		for i, w := range s.waiting {
			if w == c {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				break
			}
		}
		c.wait = nil
		o := protocol.Outcome{Err: protocol.Timeout}
		l.complete(c, &o, now)
		return
	}
	s := c.ms
	o := s.m.Cancel(int(c.slot))
	l.markDirty(s)
	c.ms = nil
	s.inFlight--
	l.complete(c, &o, now)
	switch {
	case s.state == msClosed:
	case s != s.g.cur && s.inFlight == 0:
		l.sockClose(s, now)
	default:
		l.startWaiting(s, now) // the stream it freed
	}
}

// rewait sends c, which waited on a socket that closed, to the next:
// one that waited to take a request takes it once Ready.
func (l *loop) rewait(c *lconn, now time.Time) {
	if c.thenNext {
		c.thenNext = false
		l.inFlight--
		l.ready = append(l.ready, c)
		return
	}
	l.muxBegin(c, now)
}

// muxAbandon counts the members waiting for a socket with a request
// (not those waiting to take one) as discarded.
func (l *loop) muxAbandon() {
	for _, s := range l.socks {
		if s == nil {
			continue
		}
		for _, c := range s.waiting {
			if !c.thenNext && !c.inList { // those in the flight list are counted with it
				l.shard.aborted()
			}
		}
	}
}

// newGroups makes the loop's connections into groups of streams sharing
// a socket, slot k of a group being its k-th connection.
func (l *loop) newGroups(streams int) {
	for i := 0; i < len(l.conns); i += streams {
		g := &mgroup{members: l.conns[i:min(i+streams, len(l.conns))]}
		for k, c := range g.members {
			c.g, c.slot = g, int32(k)
		}
		l.groups = append(l.groups, g)
	}
}
