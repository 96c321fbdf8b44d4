package h2conn

import "time"

// Waits of the connection's own, besides the Wait a Request ends with.
const (
	waitWindow Wait = iota + 16 // flow-control window to send more of its body
	waitSlot                    // the server's SETTINGS_MAX_CONCURRENT_STREAMS allows one more
)

// satisfiedLocked reports whether what s waits for has happened.
func (c *Conn) satisfiedLocked(s *Stream, w Wait) bool {
	switch w {
	case WaitEnd:
		return s.finished
	case WaitMessage:
		return s.finished || (s.h != nil && s.h.Ready())
	case waitWindow:
		return s.finished || (s.sendWindow > 0 && c.sendWindow > 0)
	case waitSlot:
		return c.active < c.peerMaxStreams || c.goaway
	}
	return true
}

// awaitLocked waits until what s waits for has happened, reading the
// connection itself when no other stream does. It returns Satisfied or
// why it gave up. mu is held on entry and on return.
func (c *Conn) awaitLocked(s *Stream, w Wait, deadline time.Time) End {
	e := c.awaitLoopLocked(s, w, deadline)
	if c.handoff == s {
		c.handoff = nil
	}
	c.passReaderLocked()
	return e
}

func (c *Conn) awaitLoopLocked(s *Stream, w Wait, deadline time.Time) End {
	s.deadline = deadline
	for woke := false; ; woke = true {
		if s.closed.Load() {
			return Closed
		}
		if c.satisfiedLocked(s, w) {
			return Satisfied
		}
		// The clock is read only when a wait ended unsatisfied.
		if e := s.stoppedLocked(deadline, woke); e != Satisfied {
			return e
		}
		c.bindReadDeadlineLocked(deadline)
		if !c.reading && (c.handoff == nil || c.handoff == s) {
			c.handoff = nil
			c.reading, c.reader = true, s
			err := c.readLocked(s, w)
			c.reading, c.reader = false, nil
			if err != nil {
				c.failLocked(readErrClass(err), err)
			}
			continue
		}
		s.parked, s.waitKind = true, w
		c.mu.Unlock()
		<-s.wake
		c.mu.Lock()
		s.parked = false
	}
}

// Deadlines: a parked stream has no timer. The connection's read deadline
// is kept no later than the deadline of any stream that waits, reader or
// parked; when it fires, the reader wakes the parked streams whose deadline
// has passed and sets it anew. It is only moved earlier when a stream starts
// waiting with an earlier deadline: with deadlines that grow request after
// request it is set about once per timeout, not once per request. (A read
// deadline that fires early costs one spurious wake-up.)

// bindReadDeadlineLocked makes the read deadline fire no later than d.
func (c *Conn) bindReadDeadlineLocked(d time.Time) {
	switch {
	case c.interrupted:
		// The reader is being interrupted: moving the deadline now would
		// undo it and leave the reader blocked (a stream that starts
		// waiting just as another is closed).
	case !c.rdlValid:
		c.resetReadDeadlineLocked(d)
	case !d.IsZero() && (c.rdeadline.IsZero() || d.Before(c.rdeadline)):
		c.rdeadline = d
		c.nc.SetReadDeadline(d)
	}
}

// resetReadDeadlineLocked sets the read deadline to the earliest of d and
// the deadlines of the waiting streams (none if none has one).
func (c *Conn) resetReadDeadlineLocked(d time.Time) {
	for _, p := range c.streams {
		if (p.parked || p == c.reader) && !p.deadline.IsZero() && (d.IsZero() || p.deadline.Before(d)) {
			d = p.deadline
		}
	}
	if c.reader != nil && !c.reader.deadline.IsZero() && (d.IsZero() || c.reader.deadline.Before(d)) {
		d = c.reader.deadline // a closed reader is no longer in streams
	}
	c.rdeadline, c.rdlValid = d, true
	c.nc.SetReadDeadline(d)
}

// interruptReadLocked makes the reader's read return at once.
func (c *Conn) interruptReadLocked() {
	c.rdlValid, c.interrupted = false, true
	c.nc.SetReadDeadline(aLongTimeAgo)
}

// passReaderLocked wakes a parked stream that still waits to take the
// reader role, unless someone reads or has been asked to.
func (c *Conn) passReaderLocked() {
	if c.reading || c.handoff != nil || c.dead {
		return
	}
	for _, p := range c.streams {
		if p.parked && !c.satisfiedLocked(p, p.waitKind) {
			c.handoff = p
			p.signalLocked()
			return
		}
	}
}

// readLocked is the reader role: it reads and processes frames until what s
// waits for has happened, s's wait is interrupted (deadline, Close, the
// run's end) or the connection fails (the returned error). mu is held on
// entry and on return, and released around each read.
func (c *Conn) readLocked(s *Stream, w Wait) error {
	for {
		if err := c.processLocked(); err != nil {
			return err
		}
		for _, p := range c.streams {
			if p.parked && p != s && c.satisfiedLocked(p, p.waitKind) {
				p.signalLocked()
			}
		}
		if c.satisfiedLocked(s, w) {
			return nil
		}
		if len(c.wbuf) > 0 { // control frames: SETTINGS and PING acks, WINDOW_UPDATE, RST_STREAM
			c.flushLocked(s, s.deadline, false)
			if c.dead {
				return nil
			}
		}
		c.compact()
		c.mu.Unlock()
		n, err := c.nc.Read(c.rbuf[c.rend:])
		c.mu.Lock()
		c.rend += n
		if err == nil {
			continue
		}
		if !isTimeout(err) || c.dead {
			return err
		}
		// The read deadline fired: someone's deadline, or Close, or the
		// run's end interrupting s.
		c.rdlValid, c.interrupted = false, false
		if s.closed.Load() || s.ctx != nil && s.ctx.Err() != nil {
			return nil
		}
		now := time.Now()
		for _, p := range c.streams {
			if p.parked && !p.deadline.IsZero() && !now.Before(p.deadline) {
				p.signalLocked()
			}
		}
		if !s.deadline.IsZero() && !now.Before(s.deadline) {
			return nil
		}
		c.resetReadDeadlineLocked(s.deadline)
	}
}
