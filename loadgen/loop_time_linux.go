package loadgen

import (
	"time"

	"loadgen/loadgen/protocol"
)

// The loop's clock: requests and connects in flight by deadline,
// connections backing off, and the open loop's schedule (its waits:
// loop_pace_linux.go). The loop waits no longer than the earliest of them.

// waitFor bounds the wait by the earliest deadline and backoff and, open
// loop, by the wake-up for the next request (its intended start and its
// slack) when a connection is free to send it: -1 when nothing bounds it.
func (l *loop) waitFor(now time.Time) time.Duration {
	next := time.Time{}
	if l.claimed && !l.exhausted && len(l.idle) > 0 {
		next = l.claimWake
	}
	if c := l.flightHead; c != nil && (next.IsZero() || c.deadline.Before(next)) {
		next = c.deadline
	}
	for _, c := range l.backoffs {
		if next.IsZero() || c.retryAt.Before(next) {
			next = c.retryAt
		}
	}
	for _, s := range l.opening {
		if next.IsZero() || s.deadline.Before(next) {
			next = s.deadline
		}
	}
	if next.IsZero() {
		return -1
	}
	return max(0, min(next.Sub(now), time.Second))
}

// expire times out what passed its deadline: requests (failed at their
// timeout) and connects (connect errors, as a dial that timed out).
func (l *loop) expire(now time.Time) {
	if len(l.opening) > 0 {
		l.expireOpening(now)
	}
	for c := l.flightHead; c != nil && !now.Before(c.deadline); c = l.flightHead {
		if c.g != nil {
			l.muxExpire(c, now)
			continue
		}
		if c.state == stConnecting {
			l.unflight(c)
			l.drop(c)
			l.connectFailed(c, now)
			continue
		}
		o := protocol.Outcome{Err: protocol.Timeout, Done: true, Bytes: c.read, Written: int64(c.wrote)}
		l.complete(c, &o, now)
	}
}

// retry reconnects, closed loop, the connections whose backoff is over.
func (l *loop) retry(now time.Time) {
	kept := l.backoffs[:0]
	for _, c := range l.backoffs {
		if now.Before(c.retryAt) {
			kept = append(kept, c)
			continue
		}
		c.state = stIdle
		l.ready = append(l.ready, c)
	}
	clear(l.backoffs[len(kept):])
	l.backoffs = kept
}

// dispatch starts the open loop's requests that are due, each on an idle
// connection; a request due when none is free waits for one (its latency,
// counted from its intended start, includes the wait). The next request
// in the future bounds the loop's wait (waitFor).
//
// Once the run stops, a last call sends the requests already due to the
// connections free then, if the window ended (engine.endedOnTime), and no
// more: the loop is exhausted.
func (l *loop) dispatch(now time.Time) {
	e := l.e
	last := e.stopping.Load()
	if last {
		if !e.endedOnTime() {
			l.exhausted = true
			return
		}
		now = time.Now() // a turn's now may be from before the end
	}
	for !l.exhausted {
		if !l.claimed {
			i := e.next.Add(1) - 1
			if n := uint64(e.cfg.Requests); n > 0 && i >= n {
				l.exhausted = true
				return
			}
			off, ok := e.pacer.Intended(i)
			if !ok {
				l.exhausted = true
				return
			}
			l.claimAt = e.start.Add(off)
			if !e.end.IsZero() && !l.claimAt.Before(e.end) {
				l.exhausted = true
				return
			}
			l.claimed, l.claimPick = true, e.pick(i)
			l.claimWake = l.claimAt.Add(l.slackAt(l.claimAt))
		}
		if now.Before(l.claimAt) || len(l.idle) == 0 {
			if last {
				l.exhausted = true
			}
			return
		}
		c := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		l.claimed = false
		c.intended, c.first, c.pick = l.claimAt, time.Time{}, l.claimPick
		l.begin(c, now)
		now = time.Now()
	}
}

// flight puts c in the flight list, which is in deadline order: expire
// and waitFor look at its head only. Every timeout is the same, so a
// deadline counted from now is the latest and c goes last: the walk from
// the tail stops at once. A request whose clock started earlier — with a
// connection per request, at its connect, which keeps its place instead
// (connected) — goes in before those with later deadlines, or its timeout
// would wait for theirs.
func (l *loop) flight(c *lconn) {
	if c.inList {
		l.unflight(c)
	}
	p := l.flightTail
	for p != nil && p.deadline.After(c.deadline) {
		p = p.prev
	}
	c.prev, c.inList = p, true
	if p != nil {
		c.next, p.next = p.next, c
	} else {
		c.next, l.flightHead = l.flightHead, c
	}
	if c.next != nil {
		c.next.prev = c
	} else {
		l.flightTail = c
	}
}

func (l *loop) unflight(c *lconn) {
	if !c.inList {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.flightHead = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.flightTail = c.prev
	}
	c.prev, c.next, c.inList = nil, nil, false
}
