package loadgen

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
	"loadgen/loadgen/protocol"
)

// loopSupported is true: Linux has epoll.
const loopSupported = true

// loopCount is how many event loops a run has: one per thread, at most
// one per processor running Go code (a loop never waits for another's).
func loopCount(cfg Config) int { return max(1, min(cfg.Threads, cfg.procs())) }

// loops is the event-loop driver: as wrk does, each loop drives its share
// of the connections itself — non-blocking sockets in one epoll set, its
// own read buffer, deadlines in order, the open loop's schedule in the
// wait's own timeout (loop_pace_linux.go) — with a system call to write a
// request, one to read its answer, and a wait shared by every connection
// that is ready: no goroutine is parked or woken per request. The protocol is a Session: it frames and
// parses bytes; the loop owns the socket and the clock.
type loops struct {
	e  *engine
	ls []*loop
}

func newLoops(e *engine, ld loopDialer) (driver, error) {
	d := &loops{e: e, ls: make([]*loop, loopCount(e.cfg))}
	for i := range d.ls {
		l, err := newLoop(e, ld, e.shards[i])
		if err != nil {
			d.closeFDs()
			return nil, err
		}
		d.ls[i] = l
	}
	if ld.md != nil {
		// Each connection's streams are a group on one loop, as wide as
		// -m: worker i of the goroutine driver is stream i%m of
		// connection i/m.
		streams := max(1, e.cfg.Streams)
		for i := 0; i < e.cfg.Connections*streams; i++ {
			l := d.ls[(i/streams)%len(d.ls)]
			l.conns = append(l.conns, &lconn{l: l, fd: -1, index: int32(len(l.conns)), count: &e.counts[i%e.cfg.Threads]})
		}
		for _, l := range d.ls {
			l.newGroups(streams)
		}
		return d, nil
	}
	for i := 0; i < e.cfg.Connections; i++ {
		l := d.ls[i%len(d.ls)]
		l.conns = append(l.conns, &lconn{l: l, fd: -1, index: int32(len(l.conns)), s: ld.sd.Session(), count: &e.counts[i%e.cfg.Threads]})
	}
	return d, nil
}

func (d *loops) name() string { return DriverLoop }

func (d *loops) start(ready *sync.WaitGroup) (<-chan struct{}, error) {
	var wg sync.WaitGroup
	hold := heldp.Take(len(d.ls))
	for _, l := range d.ls {
		l.holdP = hold
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			defer l.closeFDs()
			l.run(ready)
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		if hold {
			heldp.Give(len(d.ls))
		}
		close(done)
	}()
	return done, nil
}

func (d *loops) interrupt() {
	for _, l := range d.ls {
		l.wakeUp()
	}
}

func (d *loops) abort() { d.interrupt() } // each loop sees e.aborted and drops what is in flight

func (d *loops) close() {} // each loop closes its sockets as it ends

func (d *loops) closeFDs() {
	for _, l := range d.ls {
		if l != nil {
			l.closeFDs()
		}
	}
}

func (d *loops) unconnected() int {
	n := 0
	for _, l := range d.ls {
		for _, c := range l.conns {
			if !c.connected {
				n++
			}
		}
	}
	return n
}

// Special epoll events carry these in place of a connection's index.
const (
	evWake = -1 // the eventfd: the engine says stop
)

// A connection's state.
const (
	stIdle       = iota // connected (fd ≥ 0) or closed (fd < 0), no request
	stConnecting        // waiting for the socket to be writable
	stWriting           // the request partly written: waiting to write the rest
	stReading           // the request written: waiting for the answer
	stBackoff           // closed loop: a connect failed, waiting to retry
)

type loop struct {
	e     *engine
	sd    protocol.SessionDialer // one request at a time per connection, or
	md    protocol.MuxDialer     // multiplexed connections (loop_mux_linux.go)
	shard *shard
	epfd  int
	wake  int // eventfd
	// wakeMu orders wakeUp (any goroutine) against the loop closing wake as
	// it ends: a write to a closed, maybe reused, descriptor number would
	// land in somebody else's file.
	wakeMu sync.Mutex
	holdP  bool // waits for events holding its P (heldp.Take)
	conns  []*lconn
	buf    []byte
	evs    []unix.EpollEvent
	loops  int // of the run

	flightHead, flightTail *lconn // requests and connects in flight, by deadline
	inFlight               int
	backoffs               []*lconn // closed loop: waiting out a failed connect

	ready     []*lconn // closed loop: connections whose next request is to start
	idle      []*lconn // open loop: connections free for the next request
	claimed   bool     // open loop: the next request is taken from the schedule
	claimAt   time.Time
	claimPick int32     // and the request of a mix it sends
	claimWake time.Time // when to wake to send it: claimAt and its slack (slackAt)
	exhausted bool      // no more requests will start (schedule, -n, end)
	perReq    bool      // every request connects (tcp-crr)
	newConn   bool      // a new connection per request (NewConn or perReq)

	// The open loop's waits (loop_pace_linux.go): how late a request may
	// start to share a wake-up; answers timed by the kernel (stamps), read
	// when the loop wakes to send while it sleeps on sleepfd; connections
	// waiting to connect or to write, which it does not sleep past.
	slack   time.Duration
	stamps  bool
	sleepfd int
	outWait int
	oob     [64]byte
	// full is set when the last wait filled evs, so more may be ready: the
	// next turn takes them before the loop sleeps again (a deadline is not
	// judged on an answer left unread).
	full bool

	// Closed loop over multiplexed connections (loop_pause_linux.go,
	// pausable): a loop with many requests in flight and nothing to read
	// pauses for coalesce before it waits, so that one wake-up takes the
	// answers that came meanwhile instead of one wake-up each. settled is
	// when this turn found nothing to read before its pause (zero: it did
	// not pause); answered, the kernel's arrival time of the answers being
	// ended (zero: now).
	coalesce time.Duration
	ends     int // requests ended so far (after)
	yields   yields
	settled  time.Time
	answered time.Time

	// A loop that drives one kept-alive connection, closed loop, reads its
	// answers blocking (readSolo), as sockperf's and netperf's clients do,
	// instead of a wait for events and a read: soloOK says it may, solo is
	// that connection while it is open in blocking mode.
	soloOK bool
	solo   *lconn

	// multiplexed connections
	groups      []*mgroup
	socks       []*msock // by index; nil when closed
	freeSocks   []int32
	closedSocks []int32  // closed this turn: free from the next
	opening     []*msock // connecting or in their handshake, with deadlines
	dirty       []*msock // to write at the end of the turn
	// connections opened in goroutines (TLS), handed over under openMu
	opener    protocol.MuxOpener
	openMu    sync.Mutex
	handed    []opened
	spare     []opened
	openEnded bool
}

// lconn is one connection a loop drives.
type lconn struct {
	l         *loop
	fd        int
	index     int32
	s         protocol.Session
	count     *counter
	state     uint8
	forReq    bool // stConnecting: a request waits for this connect
	thenNext  bool // stConnecting: closed loop, the next request is taken once connected
	prefetch  bool // stConnecting: opened before the clock
	connected bool // it was connected at some point
	events    uint32

	req   []byte
	wrote int
	read  int64 // bytes of this answer read so far
	// request is the times of its request, for settle; its deadline is
	// also its connect's while it connects.
	request
	connStart  time.Time
	backoff    time.Duration
	retryAt    time.Time
	prev, next *lconn // the flight list
	inList     bool

	g       *mgroup // multiplexed: its group, slot, the socket its request is on,
	slot    int32
	ms      *msock
	wait    *msock // or the one it waits for (to be Ready, or for a stream)
	resends uint8  // of the request: the peer did not process it
	// pk is s as the Picker of a mix's requests (Config.Mix).
	pk protocol.Picker
}

func newLoop(e *engine, ld loopDialer, sh *shard) (*loop, error) {
	l := &loop{e: e, sd: ld.sd, md: ld.md, shard: sh, epfd: -1, wake: -1, sleepfd: -1,
		buf: make([]byte, 64<<10), evs: make([]unix.EpollEvent, 256), loops: loopCount(e.cfg)}
	if op, ok := l.md.(protocol.MuxOpener); ok && op.Opens() {
		l.opener = op
	}
	if l.md == nil {
		l.perReq = l.sd.PerRequest()
		l.newConn = l.perReq || e.cfg.NewConn
	}
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.closeFDs()
		return nil, os.NewSyscallError("eventfd", err)
	}
	if err := l.watch(l.wake, unix.EPOLLIN, evWake, unix.EPOLL_CTL_ADD); err != nil {
		l.closeFDs()
		return nil, err
	}
	if e.pacer != nil {
		l.slack = e.slack
		// A connection per request waits for its connect (outWait), so
		// such a loop seldom sleeps: no receive timestamps to turn on for
		// each.
		if l.md == nil && !l.newConn {
			if l.sleepfd, err = newSleepSet(l.wake); err != nil {
				l.closeFDs()
				return nil, err
			}
			l.stamps = true
		}
	} else if l.md != nil {
		if l.sleepfd, err = newSleepSet(l.wake); err != nil {
			l.closeFDs()
			return nil, err
		}
		l.coalesce = loopCoalesce
	}
	return l, nil
}

func (l *loop) watch(fd int, events uint32, index int32, op int) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: index}
	if err := unix.EpollCtl(l.epfd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

func (l *loop) closeFDs() {
	l.closeSocks()
	for _, c := range l.conns {
		if c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	for _, fd := range []*int{&l.sleepfd, &l.wake, &l.epfd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// wakeUp makes the loop look at the engine's flags at once. Any goroutine
// may call it.
func (l *loop) wakeUp() {
	one := [8]byte{1}
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if l.wake >= 0 {
		unix.Write(l.wake, one[:])
	}
}

// run opens the loop's connections, says it is ready, waits for the clock,
// then drives requests until the run is over.
func (l *loop) run(ready *sync.WaitGroup) {
	e := l.e
	l.soloOK = l.soloAllowed()
	switch {
	case l.md != nil:
		l.muxPrefetch()
	case !l.newConn:
		l.prefetch()
	}
	ready.Done()
	<-e.begin
	now := time.Now()
	if e.pacer == nil {
		for _, c := range l.conns {
			if c.state == stIdle {
				l.ready = append(l.ready, c)
			}
		}
		l.startReady(now)
	} else {
		for _, c := range l.conns {
			if c.state == stIdle {
				l.idle = append(l.idle, c)
			}
		}
		l.dispatch(now)
	}
	for {
		if e.aborted.Load() { // Ctrl-C: what is in flight is discarded, and counted
			l.abandon()
			return
		}
		if e.pacer != nil && !l.exhausted && e.stopping.Load() {
			l.dispatch(time.Now()) // the last call, whether or not this turn made it
			if len(l.dirty) > 0 {
				l.flushDirty(time.Now())
			}
		}
		if l.finished() {
			break
		}
		var ok bool
		if now, ok = l.turn(now); !ok {
			return
		}
	}
}

// turn waits for what comes next and handles it: events, the deadlines
// passed by then, backoffs over, requests to start. It returns the time it
// handled them at, by which nothing in flight has a deadline passed, and
// false when the loop cannot go on.
func (l *loop) turn(now time.Time) (time.Time, bool) {
	l.freeSocks, l.closedSocks = append(l.freeSocks, l.closedSocks...), l.closedSocks[:0]
	// One call: what is ready returns at once, an empty set waits; the
	// solo connection's answer is read without a wait when it comes soon
	// enough.
	var n int
	var err error
	read, slept := false, false
	l.settled = time.Time{} // this turn has not paused (sockRead)
	if c := l.solo; c != nil && c.state == stReading && c.deadline.Sub(now) > soloGuard {
		if read = l.readSolo(c); !read {
			now = time.Now() // the wait is bounded from now, not from before the read
		}
	}
	if !read {
		d := l.waitFor(now)
		if d != 0 && l.sleepy() {
			// Answers do not wake it: they are read, timed by the
			// kernel, when the loop wakes to send.
			l.sleep(d)
			d, slept = 0, true
		}
		took := false
		if d != 0 && l.coalesce > 0 {
			// Nothing to read: what the last idle turn's wake-up took
			// has been ended.
			l.yields.tally(l.ends)
		}
		if d != 0 && l.pausable() {
			// Nothing to read yet: pause, then take what came, each
			// answer timed by the kernel (sockRead).
			if n, err = l.wait(0); err != nil || n > 0 {
				took = true
			} else {
				l.settled = now
				l.sleep(pauseFor(d, l.coalesce))
				d, slept = 0, true
				loopPauses.Add(1)
				l.yields.start(byPause, l.ends)
			}
		}
		if !took {
			n, err = l.wait(d)
			if d != 0 && l.coalesce > 0 {
				l.yields.start(byWait, l.ends)
			}
		}
		l.full = n == len(l.evs)
	}
	now = time.Now()
	if err != nil && err != unix.EINTR {
		l.abandon() // cannot happen with valid descriptors; do not spin
		return now, false
	}
	for i := 0; i < n; i++ {
		l.event(&l.evs[i], now)
	}
	if !slept || !l.full {
		// After a sleep, answers may wait unread past this wait's
		// events: deadlines are judged once the next turn took them.
		l.expire(now)
	}
	l.retry(now)
	l.startReady(now)
	if l.e.pacer != nil {
		l.dispatch(now)
	}
	if len(l.dirty) > 0 {
		l.flushDirty(now)
	}
	return now, true
}

// wait waits for events up to d (< 0: until one comes), holding the
// loop's P or not (heldp.Take). Not holding it, what is ready now is taken
// without the runtime's bookkeeping, and only an empty set waits through
// it.
func (l *loop) wait(d time.Duration) (int, error) {
	if l.holdP {
		return heldp.WaitFor(l.epfd, l.evs, early(d))
	}
	if n, err := heldp.WaitFor(l.epfd, l.evs, 0); err != nil || n > 0 || d == 0 {
		return n, err
	}
	return epollWaitFor(l.epfd, l.evs, early(d))
}

// A solo connection's blocking read waits soloSlice at most (its
// SO_RCVTIMEO, which the kernel counts in its ticks: one or two of them,
// 1 to 20 ms by its HZ) before the loop waits for events instead; that
// bounds how late the loop sees Ctrl-C while an answer is slow to come.
// It reads so only while its request's deadline is further than
// soloGuard, so that the wait sees the deadline to the millisecond, as on
// any connection.
const (
	soloSlice = time.Millisecond
	soloGuard = 25 * time.Millisecond
)

// soloAllowed reports whether the loop drives one kept-alive connection,
// closed loop, keeping its P (a blocking read keeps it, as the loop's wait
// does).
func (l *loop) soloAllowed() bool {
	return l.holdP && l.md == nil && !l.newConn && l.e.pacer == nil && len(l.conns) == 1
}

// goSolo makes c solo once a request of its ended and it stays open: a
// connection that carries one request (a server that closes each) costs
// no change of mode.
func (l *loop) goSolo(c *lconn) {
	if l.soloOK && l.solo == nil && c.fd >= 0 && heldp.Blocking(c.fd, soloSlice) == nil {
		l.solo = c
	}
}

// startReady starts the next request of every connection whose last one
// ended (closed loop). They are queued, not started from where the last
// one ended, so that a protocol whose requests complete at once
// (tcp-stream) loops here instead of recursing.
func (l *loop) startReady(now time.Time) {
	for i := 0; i < len(l.ready); i++ { // next may queue more
		l.next(l.ready[i], now)
		now = time.Now()
	}
	clear(l.ready)
	l.ready = l.ready[:0]
}

// finished reports whether no request will start and none is in flight.
func (l *loop) finished() bool {
	return (l.e.stopping.Load() || l.exhausted) && l.inFlight == 0
}

// prefetch opens every connection before the clock starts, at most
// prefetchAtOnce at a time, for at most one timeout.
func (l *loop) prefetch() {
	deadline := time.Now().Add(l.e.cfg.Timeout.D())
	pending := 0
	for i := 0; i < len(l.conns) || pending > 0; {
		for ; i < len(l.conns) && pending < prefetchAtOnce; i++ {
			c := l.conns[i]
			c.prefetch = true
			if l.connect(c, time.Now(), false) {
				pending++
			}
		}
		now := time.Now()
		if !now.Before(deadline) || l.e.runCtx.Err() != nil {
			break
		}
		n, err := unix.EpollWait(l.epfd, l.evs, int(deadline.Sub(now)/time.Millisecond)+1)
		if err != nil && err != unix.EINTR {
			return
		}
		for k := 0; k < n; k++ {
			ev := &l.evs[k]
			if ev.Pad < 0 {
				if ev.Pad == evWake {
					l.drainWake()
				}
				continue
			}
			c := l.conns[ev.Pad]
			if c.state == stConnecting {
				l.connected(c, time.Now())
				pending--
			}
		}
	}
	// What did not connect in time is closed: its first request connects
	// anew.
	for _, c := range l.conns {
		if c.state == stConnecting {
			l.unflight(c)
			l.drop(c)
			c.state = stIdle
		}
	}
}

// abandon ends the loop at once (Ctrl-C): requests in flight are
// discarded, and counted as such.
func (l *loop) abandon() {
	l.muxAbandon()
	for c := l.flightHead; c != nil; c = l.flightHead {
		l.unflight(c)
		if c.state != stConnecting || c.forReq {
			l.shard.aborted()
		}
	}
	l.inFlight = 0
}
