package loadgen

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/protocol"
)

// A multiplexed socket's life on its loop (see loop_mux_linux.go for the
// requests on it): connect, the protocol's handshake, reads that end the
// requests they complete, one write per turn of what its streams started,
// failure and close.

// msock states.
const (
	msOpening    = iota // opened by a goroutine (protocol.MuxOpener: TLS)
	msConnecting        // the TCP connect
	msHandshake         // the protocol's handshake (SETTINGS)
	msReady
	msClosed
)

// Epoll tags of sockets: evSock0 - index in loop.socks.
const evSock0 = -3

type msock struct {
	g         *mgroup
	index     int32
	fd        int
	m         protocol.Mux
	state     uint8
	events    uint32
	prefetch  bool
	dirty     bool // has Output to write this turn
	inFlight  int  // requests started on it and not ended
	stamped   bool // the kernel stamps its reads (loop.coalesce)
	connStart time.Time
	deadline  time.Time // of the connect and handshake
	waiting   []*lconn  // members waiting for it to be Ready, or for a stream
	// mp is m, with a request mix.
	mp protocol.MuxPicker
}

// muxSocket opens a new socket for g (the current one is unusable).
func (l *loop) muxSocket(g *mgroup, now time.Time) *msock {
	s := &msock{g: g, fd: -1, connStart: now, deadline: now.Add(l.e.cfg.Timeout.D())}
	if n := len(l.freeSocks); n > 0 {
		s.index = l.freeSocks[n-1]
		l.freeSocks = l.freeSocks[:n-1]
		l.socks[s.index] = s
	} else {
		s.index = int32(len(l.socks))
		l.socks = append(l.socks, s)
	}
	g.cur = s
	if l.opener != nil {
		s.state = msOpening
		l.opening = append(l.opening, s)
		go l.open(s, len(g.members))
		return s
	}
	fd, err := l.md.Socket()
	if err == nil {
		if err = l.watch(fd, unix.EPOLLOUT, evSock0-s.index, unix.EPOLL_CTL_ADD); err != nil {
			unix.Close(fd)
		}
	}
	s.state = msConnecting
	l.opening = append(l.opening, s)
	if err != nil {
		s.deadline = now // fails at the next expire, as a connect that timed out
		return s
	}
	s.fd, s.events = fd, unix.EPOLLOUT
	s.m = l.md.Mux(len(g.members))
	l.stampSock(s)
	return s
}

func (l *loop) markDirty(s *msock) {
	if !s.dirty {
		s.dirty = true
		l.dirty = append(l.dirty, s)
	}
}

// flushDirty writes, once per turn, what each socket has to write.
func (l *loop) flushDirty(now time.Time) {
	for i := 0; i < len(l.dirty); i++ {
		s := l.dirty[i]
		s.dirty = false
		if s.state == msHandshake || s.state == msReady {
			l.sockWrite(s, now)
		}
	}
	clear(l.dirty)
	l.dirty = l.dirty[:0]
}

// sockWrite writes s's Output until it is written or the socket is full.
func (l *loop) sockWrite(s *msock, now time.Time) {
	for out := s.m.Output(); len(out) > 0; out = s.m.Output() {
		n, err := rawWrite(s.fd, out)
		if n > 0 {
			s.m.Wrote(n)
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if s.events&unix.EPOLLOUT == 0 {
				s.events = unix.EPOLLIN | unix.EPOLLOUT
				l.watch(s.fd, s.events, evSock0-s.index, unix.EPOLL_CTL_MOD)
			}
			return
		case err != nil:
			l.sockFailed(s, protocol.Write, now)
			return
		}
	}
	if s.events&unix.EPOLLOUT != 0 {
		s.events = unix.EPOLLIN
		l.watch(s.fd, s.events, evSock0-s.index, unix.EPOLL_CTL_MOD)
	}
}

// sockEvent handles an epoll event of a socket.
func (l *loop) sockEvent(s *msock, ev uint32, now time.Time) {
	switch s.state {
	case msConnecting:
		l.sockConnected(s, now)
	case msHandshake, msReady:
		if ev&unix.EPOLLOUT != 0 && ev&unix.EPOLLIN == 0 {
			l.sockWrite(s, now)
			return
		}
		l.sockRead(s, now)
		if s.state != msClosed && ev&unix.EPOLLOUT != 0 {
			l.sockWrite(s, now)
		}
	}
}

// opened is a connection a goroutine opened for the loop.
type opened struct {
	s   *msock
	fd  int
	m   protocol.Mux
	err error
}

// open opens s's connection in a goroutine (TCP and TLS), within s's
// deadline, and hands it to the loop.
func (l *loop) open(s *msock, slots int) {
	ctx, cancel := context.WithDeadline(l.e.runCtx, s.deadline)
	fd, m, err := l.opener.Open(ctx, slots)
	cancel()
	l.openMu.Lock()
	if l.openEnded {
		l.openMu.Unlock()
		if err == nil {
			unix.Close(fd)
		}
		return
	}
	l.handed = append(l.handed, opened{s, fd, m, err})
	l.openMu.Unlock()
	l.wakeUp()
}

// takeOpened takes the connections the goroutines opened: each goes on
// to the protocol's handshake on the loop, as a socket just connected.
func (l *loop) takeOpened(now time.Time) {
	l.openMu.Lock()
	h := l.handed
	l.handed = l.spare[:0]
	l.openMu.Unlock()
	for i := range h {
		o := h[i]
		h[i] = opened{}
		s := o.s
		switch {
		case s.state != msOpening: // timed out, or the run ended
			if o.err == nil {
				unix.Close(o.fd)
			}
		case o.err != nil:
			l.sockConnectFailed(s, now)
		default:
			s.fd, s.m = o.fd, o.m
			l.stampSock(s)
			s.state, s.events = msHandshake, unix.EPOLLIN
			if err := l.watch(s.fd, s.events, evSock0-s.index, unix.EPOLL_CTL_ADD); err != nil {
				l.sockConnectFailed(s, now)
				continue
			}
			// What the handshake left to write (TLS 1.3's Finished) goes
			// at the end of the turn, with the first request.
			l.markDirty(s)
			// What came with the TLS handshake's last record (see
			// protocol.LoopTLS) is fed as if just read; the protocol's own
			// handshake, if it has one, comes by reads; without one, it is
			// Ready now.
			if b, ok := s.m.(interface{ Buffered() bool }); ok && b.Buffered() && s.state == msHandshake {
				l.sockFilled(s, 0, now)
			} else if s.state == msHandshake && s.m.Ready() {
				l.sockReady(s, now)
			}
		}
	}
	l.spare = h[:0]
}

// endOpens makes the goroutines still opening close what they open: the
// loop is over.
func (l *loop) endOpens() {
	l.openMu.Lock()
	defer l.openMu.Unlock()
	l.openEnded = true
	for _, o := range l.handed {
		if o.err == nil {
			unix.Close(o.fd)
		}
	}
	l.handed = nil
}

// sockConnected is called when the TCP connect is over: the handshake's first
// bytes go.
func (l *loop) sockConnected(s *msock, now time.Time) {
	if protocol.SocketError(s.fd) != nil {
		l.sockConnectFailed(s, now)
		return
	}
	s.state, s.events = msHandshake, unix.EPOLLIN
	if err := l.watch(s.fd, s.events, evSock0-s.index, unix.EPOLL_CTL_MOD); err != nil {
		l.sockConnectFailed(s, now)
		return
	}
	l.sockWrite(s, now)
}

// sockRead reads what s has (one read per event: epoll is level-triggered)
// and ends the requests it completes.
func (l *loop) sockRead(s *msock, now time.Time) {
	var n int
	var err error
	if l.settled.IsZero() || !s.stamped {
		n, err = rawRead(s.fd, s.m.ReadBuf())
	} else {
		// After a pause: what this read ends arrived after the turn
		// found nothing to read (settled), when the kernel says.
		var ns int64
		n, ns, err = rawReadStamped(s.fd, s.m.ReadBuf(), l.oob[:])
		l.answered = arrived(now, ns, l.settled)
		defer func() { l.answered = time.Time{} }()
	}
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.sockFailed(s, protocol.Read, now)
		return
	case n == 0:
		l.sockFailed(s, protocol.Read, now)
		return
	}
	l.sockFilled(s, n, now)
}

// sockFilled hands the n bytes read to the protocol and ends the requests
// they complete.
func (l *loop) sockFilled(s *msock, n int, now time.Time) {
	done := s.m.Filled(n)
	if s.state == msHandshake {
		if s.m.Dead() {
			l.sockConnectFailed(s, now)
			return
		}
		if s.m.Ready() {
			l.sockReady(s, now)
		}
	}
	for _, k := range done {
		c := s.g.members[k]
		o := s.m.Outcome(int(k))
		l.muxEnded(c, &o, now)
	}
	if s.state == msClosed {
		return
	}
	if s.m.Dead() {
		l.sockWrite(s, now) // its GOAWAY, if the socket takes it
		l.sockGone(s, protocol.Protocol, now)
		return
	}
	if len(s.m.Output()) > 0 {
		l.markDirty(s) // acks, window updates
	}
	l.startWaiting(s, now)
}

// sockReady is called when the handshake is over: the members waiting start.
func (l *loop) sockReady(s *msock, now time.Time) {
	l.unopening(s)
	s.state = msReady
	measuring := !s.prefetch && !s.connStart.Before(l.e.measure)
	l.shard.dialed(now.Sub(s.connStart), nil, measuring)
	s.prefetch = false
	s.g.backoff = 0
	for _, c := range s.g.members {
		c.connected = true
	}
	l.startWaiting(s, now)
}

// sockFailed handles a socket error, or the peer closing the socket.
func (l *loop) sockFailed(s *msock, class protocol.ErrClass, now time.Time) {
	if s.state != msReady {
		l.sockConnectFailed(s, now)
		return
	}
	for _, k := range s.m.Fail(class) {
		c := s.g.members[k]
		o := s.m.Outcome(int(k))
		l.muxEnded(c, &o, now)
	}
	l.sockGone(s, class, now)
}

// sockGone closes a Ready socket that failed. A request that waited for a
// stream on it fails with it, as on goroutines.
func (l *loop) sockGone(s *msock, class protocol.ErrClass, now time.Time) {
	if s.g.cur == s {
		s.g.cur = nil
	}
	w := l.takeWaiting(s)
	l.sockClose(s, now)
	for _, c := range w {
		if !c.inList {
			l.rewait(c, now)
			continue
		}
		o := protocol.Outcome{Err: class, Done: true}
		c.resends = 0
		l.complete(c, &o, now)
	}
}

// sockConnectFailed handles a connect, or a handshake, that failed or timed
// out.
func (l *loop) sockConnectFailed(s *msock, now time.Time) {
	g := s.g
	if g.cur == s {
		g.cur = nil
	}
	prefetch := s.prefetch
	w := l.takeWaiting(s)
	l.sockClose(s, now)
	if prefetch {
		l.shard.dialed(0, errConnect, false)
	} else {
		l.shard.dialed(now.Sub(s.connStart), errConnect, !s.connStart.Before(l.e.measure))
	}
	if len(w) == 0 {
		return
	}
	var wait time.Duration
	g.backoff, wait = l.e.nextBackoff(g.backoff)
	for _, c := range w {
		// No request was sent: closed loop, the member tries again after
		// a backoff; open loop, the request is lost (never sent).
		c.thenNext, c.resends = false, 0
		l.inFlight--
		l.unflight(c) // one that waited for a stream, then for a new socket
		if l.e.pacer == nil {
			c.retryAt, c.state = now.Add(wait), stBackoff
			l.backoffs = append(l.backoffs, c)
			continue
		}
		l.freed(c, now)
	}
}

// sockClose closes s, saying goodbye first if it was Ready; its requests
// ended. Who still waited on it goes to the group's next socket.
func (l *loop) sockClose(s *msock, now time.Time) {
	if s.state == msClosed {
		return
	}
	if s.state == msReady && s.fd >= 0 && !s.m.Dead() {
		rawWrite(s.fd, s.m.Goodbye()) // if the socket takes it now
	}
	l.unopening(s)
	s.state = msClosed
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
	if s.g.cur == s {
		s.g.cur = nil
	}
	l.socks[s.index] = nil
	// Reused from the next turn on: an event of this turn for it must not
	// reach another socket.
	l.closedSocks = append(l.closedSocks, s.index)
	for _, c := range l.takeWaiting(s) {
		l.rewait(c, now)
	}
}

func (l *loop) unopening(s *msock) {
	for i, o := range l.opening {
		if o == s {
			l.opening = append(l.opening[:i], l.opening[i+1:]...)
			return
		}
	}
}

// expireOpening fails the sockets whose connect or handshake took longer
// than the timeout.
func (l *loop) expireOpening(now time.Time) {
	for i := 0; i < len(l.opening); {
		s := l.opening[i]
		if now.Before(s.deadline) {
			i++
			continue
		}
		l.sockConnectFailed(s, now) // removes it from opening
	}
}

// muxPrefetch opens every group's socket before the clock, at most
// prefetchAtOnce at a time, for at most one timeout.
func (l *loop) muxPrefetch() {
	now := time.Now()
	deadline := now.Add(l.e.cfg.Timeout.D())
	next := 0
	for next < len(l.groups) || len(l.opening) > 0 {
		for ; next < len(l.groups) && len(l.opening) < prefetchAtOnce; next++ {
			s := l.muxSocket(l.groups[next], time.Now())
			s.prefetch = true
		}
		now = time.Now()
		if !now.Before(deadline) || l.e.runCtx.Err() != nil {
			break
		}
		n, err := unix.EpollWait(l.epfd, l.evs, int(deadline.Sub(now)/time.Millisecond)+1)
		if err != nil && err != unix.EINTR {
			return
		}
		now = time.Now()
		for k := 0; k < n; k++ {
			ev := &l.evs[k]
			switch {
			case ev.Pad == evWake:
				l.drainWake()
				if l.opener != nil {
					l.takeOpened(now)
				}
			case ev.Pad <= evSock0:
				if s := l.socks[evSock0-ev.Pad]; s != nil {
					l.sockEvent(s, ev.Events, now)
				}
			}
		}
		l.expireOpening(now)
		l.flushDirty(now) // SETTINGS acks
	}
	for len(l.opening) > 0 { // not open in time: the first request opens anew
		s := l.opening[0]
		l.sockClose(s, now)
		l.shard.dialed(0, errConnect, false)
	}
}

func (l *loop) closeSocks() {
	l.endOpens()
	for _, s := range l.socks {
		if s != nil && s.fd >= 0 {
			unix.Close(s.fd)
			s.fd = -1
		}
	}
}
