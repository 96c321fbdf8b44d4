// Package loadgen is the engine: Run drives a protocol's connections closed
// or open loop, owns the clock, records every request's latency into
// histograms shared by a few workers each (memory does not grow with
// connections), and returns a results.Run.
//
// Threads and connections, in Go terms: every connection is one goroutine
// (a worker) that sends a request, waits for its answer and sends the next.
// A thread (-t) is a group of connections whose statistics are reported
// together (wrk's "Thread Stats"); the command line also caps the number of
// OS threads running Go code (GOMAXPROCS) at the thread count, so -t 1 uses
// one core like wrk -t 1, and -c 128 -t 128 runs fine on two cores.
package loadgen

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// sampleEvery is wrk's request-rate sampling interval for "Req/Sec".
const sampleEvery = 100 * time.Millisecond

type engine struct {
	cfg    Config
	dialer protocol.Dialer
	pacer  pace.Pacer

	start   time.Time // run start (warm-up begins); set before begin closes
	measure time.Time // measured window begins
	end     time.Time // no request starts at or after end (zero: -n only)
	begin   chan struct{}

	next     atomic.Uint64 // next request index (pacing and -n)
	stopping atomic.Bool   // no new requests
	aborted  atomic.Bool   // in-flight requests are discarded
	runCtx   context.Context

	workers []*worker
	shards  []*shard
	counts  []counter // answered requests per thread (wrk's Thread Stats)
}

type worker struct {
	e         *engine
	shard     *shard   // shared with other workers: statistics cost memory per shard, not per connection
	count     *counter // its thread's
	wait      *waiter
	mu        sync.Mutex // guards conn against a concurrent abort
	conn      protocol.Conn
	closed    bool
	connected bool          // it had a connection at some point
	backoff   time.Duration // between failed dials, closed loop
}

// maxResends bounds how often one request is sent again after the peer
// left it unprocessed (Outcome.Unsent): a server that sends GOAWAY at
// once on every connection fails the request instead of looping.
const maxResends = 5

// prefetchAtOnce bounds the connections being opened at the same time
// before a run, so a listen backlog is not overrun into SYN retries.
const prefetchAtOnce = 512

// Run drives d according to cfg until the duration or request count is
// reached or ctx is cancelled, and returns what it measured. A cancelled
// run still returns its result, marked Interrupted. Run fails only when cfg
// is invalid or the target cannot be reached at all before the start.
//
// Every connection is opened before the clock starts (as Nighthawk's
// --prefetch-connections), so the first requests of a run do not wait for
// lazy dials; with NewConn, each request opens its own.
//
// A Dialer that is also an io.Closer (one holding a network namespace open)
// is closed when Run returns: a dialer serves one run.
func Run(ctx context.Context, cfg Config, d protocol.Dialer) (*results.Run, error) {
	if c, ok := d.(io.Closer); ok {
		defer c.Close()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if err := checkFileLimit(cfg.Config, cfg.Pacer != nil, fileLimit()); err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, dialer: d, pacer: cfg.Pacer, begin: make(chan struct{})}

	// Preflight: one connection before any load, so an unreachable target
	// is one clear error instead of a run full of connect errors. It becomes
	// the first worker's connection.
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
	t0 := time.Now()
	first, err := d.Dial(dctx)
	dialTime := time.Since(t0)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", cfg.Target, err)
	}

	intervals := cfg.HistLog != nil
	open := e.pacer != nil
	// A worker per stream: -c connections × -m streams (multiplexing
	// protocols share a connection between m workers' Conns).
	e.workers = make([]*worker, cfg.Connections*max(1, cfg.Streams))
	e.shards = make([]*shard, min(len(e.workers), shardsPerProc*runtime.GOMAXPROCS(0)))
	for i := range e.shards {
		e.shards[i] = newShard(open, intervals)
	}
	e.counts = make([]counter, cfg.Threads)
	for i := range e.workers {
		w := &worker{e: e, shard: e.shards[i%len(e.shards)], count: &e.counts[i%cfg.Threads]}
		if open {
			if w.wait, err = newWaiter(); err != nil {
				first.Close()
				e.closeWaiters()
				return nil, err
			}
		}
		e.workers[i] = w
	}
	defer e.closeWaiters()
	e.workers[0].conn, e.workers[0].connected = first, true
	e.workers[0].shard.dialed(dialTime, nil, false)

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	e.runCtx = runCtx

	var wg, ready sync.WaitGroup
	sem := make(chan struct{}, prefetchAtOnce)
	for _, w := range e.workers {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			if !cfg.NewConn && w.conn == nil {
				sem <- struct{}{}
				w.dial(time.Now(), true)
				<-sem
			}
			ready.Done()
			<-e.begin
			w.run()
		}()
	}
	e.prefetched(ctx, &ready)
	// Opening thousands of connections leaves garbage (contexts, timers,
	// addresses) that the collector would hand back to the system only
	// slowly: hand it back now, before the clock starts, so the run's peak
	// memory is the run's, not the setup's.
	debug.FreeOSMemory()
	e.start = time.Now()
	e.measure = e.start.Add(cfg.Warmup.D())
	if cfg.Duration > 0 {
		e.end = e.measure.Add(cfg.Duration.D())
	}
	if cfg.Window != nil {
		cfg.Window(e.measure, e.end)
	}
	rep := newReporter(e)
	close(e.begin)
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	interrupted := rep.loop(ctx, allDone)

	// Stop: no new requests; in-flight ones get until their deadline, then
	// connections are closed. An interrupt discards them at once.
	e.stopping.Store(true)
	e.interruptWaits()
	if interrupted {
		e.abort()
	} else {
		select {
		case <-allDone:
		case <-ctx.Done():
			interrupted = true
			e.abort()
		case <-time.After(cfg.Timeout.D() + time.Second):
			e.abort() // a protocol ignored its deadline; don't hang
		}
	}
	<-allDone
	finish := time.Now()
	e.closeConns()
	return rep.result(finish, interrupted), nil
}

// prefetched waits until every worker has tried its first connection, for
// at most one timeout (a dial is bounded by it, but a Dialer might not obey)
// or until ctx is cancelled; workers still dialing then join late.
func (e *engine) prefetched(ctx context.Context, ready *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { ready.Wait(); close(done) }()
	t := time.NewTimer(e.cfg.Timeout.D() + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

func (e *engine) closeWaiters() {
	for _, w := range e.workers {
		if w != nil && w.wait != nil {
			w.wait.close()
		}
	}
}

func (e *engine) interruptWaits() {
	for _, w := range e.workers {
		if w.wait != nil {
			w.wait.interrupt()
		}
	}
}

// abort discards in-flight requests: closing a Conn makes its Do return.
func (e *engine) abort() {
	e.aborted.Store(true)
	e.stopping.Store(true)
	e.interruptWaits()
	for _, w := range e.workers {
		w.abortConn()
	}
}

// closeConns closes every connection once all workers have returned.
func (e *engine) closeConns() {
	for _, w := range e.workers {
		w.dropConn()
	}
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
// window.
func (w *worker) dial(now time.Time, prefetch bool) bool {
	e := w.e
	ctx, cancel := context.WithTimeout(e.runCtx, e.cfg.Timeout.D())
	c, err := e.dialer.Dial(ctx)
	cancel()
	if e.aborted.Load() {
		if c != nil {
			c.Close()
		}
		return false
	}
	w.shard.dialed(time.Since(now), err, !prefetch && !now.Before(e.measure))
	if err != nil {
		return true
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		c.Close()
		return false
	}
	w.conn, w.connected = c, true
	w.mu.Unlock()
	return true
}

// run is one connection's loop.
func (w *worker) run() {
	for w.step() {
	}
}

// step takes the next request, waits for its intended start (open loop),
// executes it and records it. It returns false when the worker is done.
// It allocates nothing (see TestStepAllocatesNothing).
//
// What a latency counts: open loop, from the request's intended start,
// whatever it waited for (a connection included: that is the correction);
// closed loop, from when the request is sent, so a connection's TCP and TLS
// handshake (at the start, or after a reconnect) is in the connect histogram,
// not in its first request's latency — except with NewConn, where the
// handshake is what is measured. Every request sent counts, a failed one
// at the time it failed: a timeout at its timeout.
func (w *worker) step() bool {
	e := w.e
	if e.stopping.Load() {
		return false
	}
	i := e.next.Add(1) - 1
	if n := uint64(e.cfg.Requests); n > 0 && i >= n {
		return false
	}
	open := e.pacer != nil
	var intended time.Time
	if open {
		off, ok := e.pacer.Intended(i)
		if !ok {
			return false
		}
		intended = e.start.Add(off)
		if !e.end.IsZero() && !intended.Before(e.end) {
			return false
		}
		if !w.wait.sleep(time.Until(intended)) || e.stopping.Load() {
			return false
		}
	}
	start := time.Now()
	if !open && !e.end.IsZero() && !start.Before(e.end) {
		return false
	}
	var o protocol.Outcome
	var deadline, done time.Time
	var lag time.Duration // of the first send, open loop
	for resend := 0; ; resend++ {
		if w.conn == nil {
			if !w.dial(start, false) {
				return false
			}
			if w.conn == nil { // the dial failed and was counted
				if !open {
					w.backoff = min(max(2*w.backoff, 10*time.Millisecond), time.Second)
					time.Sleep(w.backoff)
				}
				return true
			}
			w.backoff = 0
			if !e.cfg.NewConn {
				start = time.Now() // connecting is not part of a kept-alive request
			}
		}
		if e.cfg.Timeout > 0 {
			deadline = start.Add(e.cfg.Timeout.D())
		}
		if resend == 0 && open {
			lag = start.Sub(intended)
		}
		o = w.conn.Do(e.runCtx, deadline)
		done = time.Now()
		if e.aborted.Load() {
			w.shard.aborted()
			return false
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
	if !open {
		intended = start
	}
	measuring := !intended.Before(e.measure)
	failed := o.Err != protocol.None && o.Err != protocol.Status
	answeredLate := false
	if !deadline.IsZero() && done.After(deadline) {
		// The timeout is a hard bound: an answer that came after it is a
		// timeout, however late the timer fired; and it is counted at its
		// timeout.
		if !failed {
			o.Err, failed, answeredLate = protocol.Timeout, true, true
		}
		if o.Err == protocol.Timeout {
			done = deadline
		}
	}
	if measuring {
		if open {
			w.shard.paced(lag)
		}
		if failed {
			w.shard.failure(&o, done.Sub(intended), done.Sub(start))
		} else {
			w.shard.response(&o, done, done.Sub(intended), done.Sub(start))
			w.count.n.Add(1)
		}
	}
	// A request that failed leaves its connection in an unknown state; one
	// answered in full after its timeout left it clean.
	if o.Done || e.cfg.NewConn || (failed && !answeredLate) {
		w.dropConn()
	}
	return true
}

// expected counts the requests the pacer meant to start in [from, to).
func expected(p pace.Pacer, from, to time.Duration) int64 {
	first := searchIndex(p, from)
	last := searchIndex(p, to)
	return int64(last - first)
}

// searchIndex is the first index whose intended offset is >= at.
func searchIndex(p pace.Pacer, at time.Duration) uint64 {
	hi := uint64(1)
	for {
		off, ok := p.Intended(hi)
		if !ok || off >= at || hi >= 1<<62 {
			break
		}
		hi *= 2
	}
	return uint64(sort.Search(int(hi), func(i int) bool {
		off, ok := p.Intended(uint64(i))
		return !ok || off >= at
	}))
}
