package tcpecho

import (
	"net"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
	"loadgen/targets/evloop"
)

// loopSupported is true: Linux has epoll.
const loopSupported = true

// The event loops: a loop per GOMAXPROCS, each an epoll set of its
// connections and the listening socket. Each read of an echo connection is
// written back with one write from the loop's one buffer; a sink's reads go
// to the loop's sink buffer and are counted. A write the socket cannot
// take whole keeps the rest on the connection, which then waits to be
// writable instead of readable: the peer's reading paces the echo, as a
// blocking write would.

type loops struct {
	g    *evloop.Group
	ls   []*loop
	kept bool // the loops keep their Ps while they wait (evloop.Group.KeepPs)
}

// tagListener tags the listening socket's events; a connection's events
// carry its index in loop.conns.
const tagListener = -1

// acceptBatch bounds the connections a loop accepts per event, so that a
// flood of connects does not stall the connections it serves.
const acceptBatch = 64

type loop struct {
	s     *Server
	p     *evloop.Poller
	acc   *evloop.Acceptor
	kept  bool    // the loop keeps its P while it waits: it may read solo
	conns []*conn // by index; a closed one (fd < 0) is reused
	free  []int32 // indexes of closed conns
	open  int     // conns open
	solos uint64  // messages echoed solo (read by tests once the loop ended)
	echo  []byte  // echoBufSize, shared by the loop's echo connections
	sink  []byte  // sinkBufSize, made at the first sink
}

type conn struct {
	fd    int
	index int32
	kind  kind
	head  [len(SinkMagic)]byte // undecided: the bytes read so far
	nhead int
	pend  []byte // echo bytes the socket did not take yet
	buf   []byte // pend's storage, kept for the connection's next one
	// echoes counts the messages echoed; blocking, that the socket is in
	// blocking mode for solo reads (heldp.Blocking).
	echoes   uint32
	blocking bool
}

// A loop whose one connection is an echo that goes on (TCP_RR) reads its
// next message blocking (heldp.Recv) instead of waiting for events and
// then reading: a system call fewer per round trip, as sockperf's and
// netperf's servers make. soloSlice bounds each blocking read (the
// socket's receive timeout, which the kernel counts in its ticks: one or
// two, 1 to 20 ms by its HZ) and soloFor the time spent echoing so before
// the loop looks at its other events again: together they bound how late
// a new connection is accepted, or Close seen, while one connection is
// served solo. A connection turns solo at its soloAfter-th message, so
// that one that carries a single message (TCP_CRR) costs no change of
// mode.
const (
	soloSlice = time.Millisecond
	soloFor   = time.Millisecond
	soloAfter = 2
)

func startLoops(s *Server, ln net.Listener) (*loops, error) {
	n := s.cfg.Loops
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	g, err := evloop.NewGroup(ln, n, 256, tagListener)
	if err != nil {
		return nil, err
	}
	// Every connection stays on its loop (echo and sink alike), so the
	// loops may keep their Ps.
	ev := &loops{g: g, kept: g.KeepPs()}
	for i := range g.Len() {
		p, acc := g.Loop(i)
		ev.ls = append(ev.ls, &loop{s: s, p: p, acc: acc, kept: ev.kept, echo: make([]byte, echoBufSize)})
	}
	g.Go(func(i int) { ev.ls[i].run() })
	return ev, nil
}

// close stops the loops, which close their connections, then the
// listening socket.
func (ev *loops) close() error { return ev.g.Close() }

func (l *loop) run() {
	defer l.closeAll()
	for {
		if l.p.Run(l.acc.Due(), l.handle) != nil || l.acc.Resume(time.Now()) != nil {
			return // closed (or the set is unusable: nothing to serve with)
		}
	}
}

// handle serves a batch of events; it reports whether every socket of it
// was left drained (see evloop.Poller.Run).
func (l *loop) handle(evs []unix.EpollEvent) bool {
	drained := true
	last := len(evs) - 1
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
		case len(c.pend) > 0:
			drained = l.flush(c) && drained
		case c.kind == isSink:
			drained = l.drain(c, ev.Events) && drained
		default:
			drained = l.echoRead(c, ev.Events) && drained
			if i == last && l.open == 1 && l.kept && c.fd >= 0 && c.kind == isEcho && len(c.pend) == 0 {
				l.solo(c)
			}
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
func (l *loop) conn(fd int) *conn {
	var c *conn
	if n := len(l.free); n > 0 {
		c = l.conns[l.free[n-1]]
		l.free = l.free[:n-1]
	} else {
		c = &conn{index: int32(len(l.conns))}
		l.conns = append(l.conns, c)
	}
	c.fd, c.kind, c.nhead, c.pend = fd, undecided, 0, nil
	c.echoes, c.blocking = 0, false
	l.open++
	return c
}

// drop closes c.
func (l *loop) drop(c *conn) {
	evloop.Close(c.fd)
	c.fd, c.pend = -1, nil
	if cap(c.buf) > echoBufSize {
		c.buf = nil
	}
	l.free = append(l.free, c.index)
	l.open--
	l.s.limit.Release()
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		if c.fd >= 0 {
			l.drop(c)
		}
	}
}

// echoRead reads once and writes back what came; while still undecided,
// the bytes so far go first, and the magic turns c into a sink. True when
// c is drained (see evloop.Drained), waits to be writable, or is gone.
func (l *loop) echoRead(c *conn, events uint32) bool {
	buf := l.echo
	k := copy(buf, c.head[:c.nhead])
	n, err := evloop.Read(c.fd, buf[k:])
	switch {
	case err == unix.EAGAIN:
		return true
	case err == unix.EINTR:
		return false
	case err != nil || n == 0:
		l.drop(c) // closed (a prefix of the magic left unanswered, as nothing asked for it)
		return true
	}
	drained := evloop.Drained(n, len(buf)-k, events)
	n += k
	if c.kind == undecided {
		switch sniff(buf[:n]) {
		case undecided:
			c.nhead = copy(c.head[:], buf[:n])
			return drained
		case isSink:
			c.kind = isSink
			l.s.sunk.Add(uint64(n - len(SinkMagic)))
			return drained
		}
		c.kind, c.nhead = isEcho, 0
	}
	return l.write(c, buf[:n]) || drained
}

// solo serves c, the loop's one connection, with blocking reads, each
// echoed, until one finds nothing within soloSlice, a signal comes, c
// ends or waits to be writable, or soloFor has passed.
func (l *loop) solo(c *conn) {
	if !c.blocking {
		if c.echoes < soloAfter || heldp.Blocking(c.fd, soloSlice) != nil {
			return
		}
		c.blocking = true
	}
	for until := time.Now().Add(soloFor); time.Now().Before(until); {
		n, err := heldp.Recv(c.fd, l.echo)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			return
		case err != nil || n == 0:
			l.drop(c)
			return
		}
		l.solos++
		if l.write(c, l.echo[:n]) {
			return
		}
	}
}

// write echoes p, keeping on c what the socket does not take; true when
// c now waits to be writable (or was closed).
func (l *loop) write(c *conn, p []byte) bool {
	n, err := evloop.Write(c.fd, p)
	if n > 0 {
		l.s.echoed.Add(uint64(n))
	}
	switch {
	case n == len(p):
		c.echoes++
		return false
	case err != nil && err != unix.EAGAIN && err != unix.EINTR:
		l.drop(c)
		return true
	}
	c.buf = append(c.buf[:0], p[n:]...)
	c.pend = c.buf
	if l.p.Mod(c.fd, unix.EPOLLOUT, c.index) != nil {
		l.drop(c)
	}
	return true
}

// flush writes what c kept; once all is written it reads again. True
// while c still waits to be writable (or was closed); false once it reads
// again, since bytes may have come meanwhile.
func (l *loop) flush(c *conn) bool {
	n, err := evloop.Write(c.fd, c.pend)
	if n > 0 {
		l.s.echoed.Add(uint64(n))
		c.pend = c.pend[n:]
	}
	switch {
	case len(c.pend) == 0:
		c.pend = nil
		if l.p.Mod(c.fd, evloop.Readable, c.index) != nil {
			l.drop(c)
			return true
		}
		return false
	case err != nil && err != unix.EAGAIN && err != unix.EINTR:
		l.drop(c)
	}
	return true
}

// sinkReads bounds the reads of one sink per event.
const sinkReads = 8

// drain reads a sink and counts what came, until a read comes back drained
// (the socket is drained, see evloop.Drained) or sinkReads were made;
// true in the first case.
func (l *loop) drain(c *conn, events uint32) bool {
	if l.sink == nil {
		l.sink = make([]byte, sinkBufSize)
	}
	for range sinkReads {
		n, err := evloop.Read(c.fd, l.sink)
		switch {
		case err == unix.EAGAIN:
			return true
		case err == unix.EINTR:
			continue
		case err != nil || n == 0:
			l.drop(c)
			return true
		}
		l.s.sunk.Add(uint64(n))
		if n < len(l.sink) {
			return evloop.Drained(n, len(l.sink), events)
		}
	}
	return false
}
