package loadgen

import (
	"context"
	"errors"
	"sync"
	"time"

	"loadgen/loadgen/protocol"
)

// workers is the goroutine driver: a goroutine per connection (per stream
// with -m) that sends a request, waits for its answer, records it and
// sends the next. It drives every protocol.
type workers struct {
	e        *engine
	ws       []*worker
	stop     chan struct{} // closed by interrupt: wakes the workers waiting out a backoff
	stopOnce sync.Once
}

type worker struct {
	e         *engine
	shard     *shard   // shared with other workers: statistics cost memory per shard, not per connection
	count     *counter // its thread's
	wait      *waiter
	mu        sync.Mutex // guards conn against a concurrent abort
	conn      protocol.Conn
	closed    bool
	connected bool            // it had a connection at some point
	backoff   time.Duration   // between failed dials, closed loop
	pause     *time.Timer     // times the backoff; made at the first one
	stop      <-chan struct{} // workers.stop
	// perReq is conn when it connects inside every Do (tcp-crr): that
	// connect is counted as one, and its Dial, which opened nothing, is not.
	perReq perRequestConn
	// pk is pkConn, a connection of a request mix's, as the Picker of its
	// requests.
	pk     protocol.Picker
	pkConn protocol.Conn
	// msgs times the messages of conn's streamed answers; msgConn is the
	// Conn it was given to.
	msgs    messageClock
	msgConn protocol.Conn
	// index is its connection's, from 0: with a connection schedule it
	// sends while the schedule counts more connections than that.
	index int
	// host is its connection's host, of a request mix on several (0 on
	// one), and dialer what dials it.
	host   int32
	dialer protocol.Dialer
}

// perRequestConn is a Conn that opens a connection inside every Do, as
// tcp-crr's does. The event loop times such a connect itself; goroutines
// learn of it from LastConnect, which reports the last Do's: tried is
// false when Do made none (the Conn was closed), at is when the connection
// was up, zero when the connect failed. Called by the worker, after Do.
type perRequestConn interface {
	LastConnect() (at time.Time, tried bool)
}

// errPerRequestConnect marks a failed connect inside a Do.
var errPerRequestConnect = errors.New("connect failed")

// newWorkers makes a worker per stream: -c connections × -m streams
// (multiplexing protocols share a connection between m workers' Conns).
// The preflight's connection becomes the first worker's.
func newWorkers(e *engine, first protocol.Conn, dialTime time.Duration) (*workers, error) {
	cfg := e.cfg
	d := &workers{e: e, ws: make([]*worker, cfg.Connections*max(1, cfg.Streams)), stop: make(chan struct{})}
	for i := range d.ws {
		w := &worker{e: e, shard: e.shards[i%len(e.shards)], count: &e.counts[i%cfg.Threads], stop: d.stop, index: i / max(1, cfg.Streams)}
		w.host, w.dialer = e.host(w.index)
		if e.pacer != nil {
			var err error
			if w.wait, err = newWaiter(); err != nil {
				first.Close()
				d.closeWaiters()
				return nil, err
			}
		}
		d.ws[i] = w
	}
	switch {
	case isPerRequest(first):
		// A per-request Conn's preflight only checked the target: the
		// event loop does not count it as a connection either.
		d.ws[0].conn, d.ws[0].connected = first, true
		d.ws[0].perReq = first.(perRequestConn)
	case cfg.NewConn:
		// Every request opens its own connection, handshake included in
		// its latency: the first one too, as on the event loop.
		first.Close()
	default:
		d.ws[0].conn, d.ws[0].connected = first, true
		d.ws[0].shard.dialed(dialTime, nil, false)
	}
	return d, nil
}

// isPerRequest tells a Conn that connects inside every Do (tcp-crr).
func isPerRequest(c protocol.Conn) bool {
	_, ok := c.(perRequestConn)
	return ok
}

func (d *workers) name() string { return DriverGoroutines }

// start runs every worker: it opens its connection (at most
// prefetchAtOnce at a time), says it is ready, and waits for the clock.
func (d *workers) start(ready *sync.WaitGroup) (<-chan struct{}, error) {
	e := d.e
	var wg sync.WaitGroup
	sem := make(chan struct{}, prefetchAtOnce)
	for _, w := range d.ws {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			if !e.cfg.NewConn && w.conn == nil {
				sem <- struct{}{}
				w.dial(time.Now(), true)
				<-sem
			}
			ready.Done()
			<-e.begin
			w.run()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done, nil
}

func (d *workers) unconnected() int {
	n := 0
	for _, w := range d.ws {
		if !w.connected {
			n++
		}
	}
	return n
}

func (d *workers) closeWaiters() {
	for _, w := range d.ws {
		if w != nil && w.wait != nil {
			w.wait.close()
		}
	}
}

// interrupt wakes every worker that waits: for its request's time (open
// loop) or out a backoff (closed loop), so a stopping run stops at once.
func (d *workers) interrupt() {
	d.stopOnce.Do(func() { close(d.stop) })
	for _, w := range d.ws {
		if w.wait != nil {
			w.wait.interrupt()
		}
	}
}

// abort closes every connection: closing a Conn makes its Do return.
func (d *workers) abort() {
	for _, w := range d.ws {
		w.abortConn()
	}
}

// close closes every connection once all workers have returned.
func (d *workers) close() {
	for _, w := range d.ws {
		w.dropConn()
	}
	d.closeWaiters()
}

// abortConn closes the worker's connection from another goroutine, so that
// a Do in progress returns, and keeps the worker from dialing again. Only
// the worker itself writes w.conn.
func (w *worker) abortConn() {
	w.mu.Lock()
	if w.conn != nil {
		_ = w.conn.Close()
	}
	w.closed = true
	w.mu.Unlock()
}

// dropConn closes the worker's connection (from the worker).
func (w *worker) dropConn() {
	w.mu.Lock()
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	w.mu.Unlock()
}

// dial opens the worker's connection; false when the run is over. A
// prefetch dial (before the clock starts) is never part of the measured
// window. With NewConn a failed dial is not a connect error of its own:
// the request it was for fails (and counts it).
func (w *worker) dial(now time.Time, prefetch bool) bool {
	e := w.e
	ctx, cancel := context.WithTimeout(e.runCtx, e.cfg.Timeout.D())
	c, err := w.dialer.Dial(ctx)
	cancel()
	if e.aborted.Load() {
		if c != nil {
			c.Close()
		}
		return false
	}
	inWindow := !prefetch && !now.Before(e.measure)
	perReq, _ := c.(perRequestConn)
	if perReq == nil {
		w.shard.dialedErr(time.Since(now), err, inWindow, inWindow && !e.cfg.NewConn)
		if err != nil && inWindow && !e.cfg.NewConn {
			e.mix.connectFailed(w.host)
		}
	}
	if err != nil {
		return true
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		c.Close()
		return false
	}
	w.conn, w.connected, w.perReq = c, true, perReq
	w.mu.Unlock()
	return true
}

// waitBackoff waits out the backoff after a failed connect, or less: it
// ends at the window's end, when the run stops and when it is interrupted,
// so that a dead target keeps no worker, and so not the run, past its
// window. False when the run is over.
func (w *worker) waitBackoff(d time.Duration) bool {
	e := w.e
	if !e.end.IsZero() {
		left := time.Until(e.end)
		if left <= 0 {
			return false
		}
		d = min(d, left)
	}
	if w.pause == nil {
		w.pause = time.NewTimer(d)
	} else {
		w.pause.Reset(d)
	}
	// Not on runCtx: the reporter must see an interrupt first, to mark
	// the run interrupted, rather than every worker ending on its own;
	// it then stops the workers (interrupt closes stop).
	select {
	case <-w.pause.C:
		return !e.stopping.Load()
	case <-w.stop:
	}
	w.pause.Stop()
	return false
}

// run is one connection's loop.
func (w *worker) run() {
	for w.step() {
	}
}

// step takes the next request, waits for its intended start (open loop),
// executes it and settles it (settle: the engine's rules). It returns
// false when the worker is done. It allocates nothing (see
// TestStepAllocatesNothing).
//
// A try starts when the request is sent, so a connection's TCP and TLS
// handshake (at the start, or after a reconnect) is in the connect
// histogram — except with NewConn, where the handshake is part of the
// request; open loop, the latency runs from the intended start anyway.
func (w *worker) step() bool {
	e := w.e
	if e.stopping.Load() {
		return false
	}
	open := e.pacer != nil
	if e.cfg.ConnSchedule != nil && !w.scheduled() {
		return false
	}
	// Closed loop, a kept-alive connection is opened before a request is
	// taken: a connect that fails costs no request (-n stays exact) and is
	// tried again after a backoff.
	if !open && !e.cfg.NewConn && w.conn == nil {
		now := time.Now()
		if !e.end.IsZero() && !now.Before(e.end) {
			return false
		}
		if !w.dial(now, false) {
			return false
		}
		if w.conn == nil {
			var wait time.Duration
			w.backoff, wait = e.nextBackoff(w.backoff)
			return w.waitBackoff(wait)
		}
		w.backoff = 0
	}
	i, pick := e.claim(w.host) // pick: of a request mix; -1 without
	if n := uint64(e.cfg.Requests); n > 0 && i >= n {
		return false
	}
	r := request{pick: pick}
	if open {
		off, ok := e.pacer.Intended(i)
		if !ok {
			return false
		}
		r.intended = e.start.Add(off)
		if !e.end.IsZero() && !r.intended.Before(e.end) {
			return false
		}
		slept := w.wait.sleep(time.Until(r.intended))
		if (!slept || e.stopping.Load()) && !e.endedOnTime() {
			return false
		}
	}
	start := time.Now()
	if !open && !e.end.IsZero() && !start.Before(e.end) {
		return false
	}
	var o protocol.Outcome
	var done time.Time
	for resend := 0; ; resend++ {
		if w.conn == nil {
			// Open loop, a new connection per request, or a resend.
			if !w.dial(start, false) {
				return false
			}
			if w.conn == nil {
				if e.cfg.NewConn {
					// The handshake is part of the request: its failure
					// fails the request.
					r.try(start)
					r.deadline = start.Add(e.cfg.Timeout.D())
					o = protocol.Outcome{Err: protocol.Connect}
					e.settle(w.shard, w.count, &r, &o, time.Now(), true)
				}
				return true // open loop: the request is lost, counted as never sent
			}
			w.backoff = 0
			if !e.cfg.NewConn {
				start = time.Now() // connecting is not part of a kept-alive request
			}
		}
		r.try(start)
		if e.cfg.Timeout > 0 {
			r.deadline = start.Add(e.cfg.Timeout.D())
		}
		var connStart time.Time
		if w.perReq != nil {
			connStart = time.Now()
		}
		if r.pick >= 0 {
			if w.pkConn != w.conn { // once a connection: a type assertion may allocate
				w.pk, w.pkConn = w.conn.(protocol.Picker), w.conn
			}
			w.pk.Pick(int(e.mix.local[r.pick]))
		}
		if e.messages {
			w.clockMessages(open, r.intended, start)
		}
		o = w.conn.Do(e.runCtx, r.deadline)
		done = time.Now()
		if e.aborted.Load() {
			w.shard.aborted()
			return false
		}
		if w.perReq != nil {
			w.perRequestConnect(connStart)
		}
		if !o.Unsent || resend == maxResends {
			break
		}
		// The peer did not process it (its connection was going away):
		// not a failure; send it again on a new connection, as a real
		// client does.
		w.dropConn()
		start = done
	}
	// A per-request Conn keeps no connection between requests: the one a
	// request made is closed in its Do, and the Conn stays unless Done.
	newConn := e.cfg.NewConn || w.perReq != nil
	if e.settle(w.shard, w.count, &r, &o, done, newConn) && (w.perReq == nil || o.Done) {
		w.dropConn()
	}
	return true
}

// perRequestConnect counts the connect the last Do made, as the event
// loop counts its own for tcp-crr: established (measured when it started
// in the window) with its connect time, or failed. A failed one is not a
// connect error of its own: the request it was part of failed, and
// counts it.
func (w *worker) perRequestConnect(start time.Time) {
	at, tried := w.perReq.LastConnect()
	switch {
	case !tried:
	case at.IsZero():
		w.shard.dialedErr(0, errPerRequestConnect, !start.Before(w.e.measure), false)
	default:
		w.shard.dialedErr(at.Sub(start), nil, !start.Before(w.e.measure), false)
	}
}
