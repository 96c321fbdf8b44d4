// Package loadgen is the engine: Run drives a protocol's connections closed
// or open loop, owns the clock, records every request's latency into
// histograms shared by a few connections each (memory does not grow with
// connections), and returns a results.Run.
//
// Two drivers send the requests. The event loop (loop_linux.go) drives
// HTTP/1.1, HTTP/2 and gRPC (unary calls and ping-pong streams) with or
// without TLS (HTTP/2's streams sharing a socket: loop_mux_linux.go; over
// TLS the connection opened in a goroutine, then its records sealed and
// opened in memory, on that multiplexed path, HTTP/1.1 as one stream),
// tcp-rr, tcp-crr, tcp-stream — as wrk and h2load do: a loop per
// thread, non-blocking sockets in one epoll set, no goroutine switch per
// request. Goroutines (workers.go) drive every
// protocol: a goroutine per connection (per stream with -m) sends a
// request, waits for its answer, records it and sends the next. Both keep
// the same rules, applied by one function (settle, recorder.go), and pass
// the same tests.
//
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

// maxResends bounds how often one request is sent again after the peer
// left it unprocessed (Outcome.Unsent): a server that sends GOAWAY at
// once on every connection fails the request instead of looping.
const maxResends = 5

// prefetchAtOnce bounds the connections being opened at the same time
// before a run, so a listen backlog is not overrun into SYN retries.
const prefetchAtOnce = 512

type engine struct {
	cfg    Config
	dialer protocol.Dialer
	pacer  pace.Pacer
	drv    driver

	start   time.Time // run start (warm-up begins); set before begin closes
	measure time.Time // measured window begins
	end     time.Time // no request starts at or after end (zero: -n only)
	begin   chan struct{}

	next     atomic.Uint64 // next request index (pacing and -n)
	stopping atomic.Bool   // no new requests
	ended    atomic.Bool   // set before stopping when the window ran out (or every worker finished), not cut short
	aborted  atomic.Bool   // in-flight requests are discarded
	runCtx   context.Context

	shards []*shard
	counts []counter // answered requests per thread (wrk's Thread Stats)
	// preflightOpened is what the dialer's ConnCounter counted for a
	// preflight the run did not keep: Established leaves it out.
	preflightOpened int64
	backoffCap      time.Duration // closed loop, between failed connects (backoff.go)
	// mix is the request mix (Config.Mix, requestmix.go); nil without.
	mix *mixState
	// messages is set when the Dialer's answers are streams of messages,
	// whose statistics the shards keep (messages.go).
	messages bool
	// slack is Config.Slack, 0 for none: how late an open-loop request
	// may start to share an event loop's wake-up.
	slack time.Duration
}

// driver sends the requests of a run: goroutines, or event loops.
type driver interface {
	// start opens the connections: each worker or loop signals ready once
	// it tried them, then waits for begin before sending.
	start(ready *sync.WaitGroup) (done <-chan struct{}, err error)
	// interrupt wakes whatever waits for a request's time, so that a
	// stopping run stops at once.
	interrupt()
	// abort discards the requests in flight.
	abort()
	// close closes every connection, once done is closed.
	close()
	// unconnected counts the connections that never came up.
	unconnected() int
	// name is recorded in the result: "loop" or "goroutines".
	name() string
}

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
	ld, loop, err := chooseDriver(cfg, d)
	if err != nil {
		return nil, err
	}
	if err := checkFileLimit(cfg.Config, cfg.Pacer != nil && !loop, fileLimit()); err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, dialer: d, pacer: cfg.Pacer, begin: make(chan struct{}), backoffCap: backoffCap(cfg.Connections),
		slack: max(0, cfg.Slack)}

	// Preflight: one connection before any load, so an unreachable target
	// is one clear error instead of a run full of connect errors. The
	// goroutines keep it as the first worker's connection.
	// The target's name is looked up first, once, within a bound of its
	// own: a lookup that times out or fails for a while (a pod's first
	// seconds, a cluster DNS under load, a lost UDP packet Go's resolver
	// waits 5 s on) is asked again, never failing a run whose target is
	// there; and no connect of the run waits on DNS after.
	if r, ok := d.(protocol.Resolver); ok {
		rctx, cancel := context.WithTimeout(ctx, max(ResolveTimeout, cfg.Timeout.D()))
		err := r.Resolve(rctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cannot connect to %s: %w", cfg.Target, err)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
	t0 := time.Now()
	first, err := d.Dial(dctx)
	dialTime := time.Since(t0)
	cancel()
	var hostsOpened int64 // by the other hosts' preflights
	if hd, ok := d.(protocol.HostDialer); ok {
		if err != nil {
			return nil, fmt.Errorf("cannot connect to %s (host 1 of the request mix's %d): %w", hd.Origin(0), hd.Hosts(), err)
		}
		// Every host once: a host that refuses is the run's error too.
		cc, counts := d.(protocol.ConnCounter)
		if counts {
			hostsOpened = -cc.Opened()
		}
		if err := preflightHosts(ctx, cfg, hd); err != nil {
			first.Close()
			return nil, err
		}
		if counts {
			hostsOpened += cc.Opened()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", cfg.Target, err)
	}

	workers := cfg.Connections * max(1, cfg.Streams)
	nshards := min(workers, shardsPerProc*cfg.procs())
	if loop {
		nshards = loopCount(cfg)
	}
	e.shards = make([]*shard, nshards)
	if md, ok := d.(protocol.MessageDialer); ok && md.StreamsMessages() {
		e.messages = true
	}
	for i := range e.shards {
		e.shards[i] = newShard(e.pacer != nil, cfg.HistLog != nil || cfg.LiveLatency)
		if e.messages {
			e.shards[i].msgs = newMessageStats()
		}
	}
	e.counts = make([]counter, cfg.Threads)
	if cfg.Mix != nil {
		if e.mix, err = newMix(cfg.Mix, e.shards, first, d, cfg.Connections); err != nil {
			first.Close()
			return nil, err
		}
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	e.runCtx = runCtx
	if cc, ok := d.(protocol.ConnCounter); ok && (loop || cfg.NewConn || isPerRequest(first)) {
		e.preflightOpened = cc.Opened()
	} else {
		e.preflightOpened = hostsOpened // closed: the goroutines keep the first only
	}
	if loop {
		first.Close()
		e.drv, err = newLoops(e, ld)
	} else {
		e.drv, err = newWorkers(e, first, dialTime)
	}
	if err != nil {
		return nil, err
	}
	e.cfg.Driver = e.drv.name()

	var ready sync.WaitGroup
	allDone, err := e.drv.start(&ready)
	if err != nil {
		return nil, err
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

	interrupted := rep.loop(ctx, allDone)

	// Stop: no new requests; in-flight ones get until their deadline, then
	// connections are closed. An interrupt discards them at once: it is
	// marked before anything is woken, so that nothing woken sends.
	if interrupted {
		e.aborted.Store(true)
	} else {
		e.ended.Store(true)
	}
	e.stopping.Store(true)
	e.drv.interrupt()
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
	e.drv.close()
	res := rep.result(finish, interrupted)
	if hd, ok := d.(protocol.HostDialer); ok && cfg.Driver == DriverAuto && SpareP(cfg, hd.Host(0)) {
		res.Notes = append(res.Notes, fmt.Sprintf("the request mix goes to %d hosts: it ran on goroutines (the event loop drives one host)", hd.Hosts()))
	}
	res.Summary.Datagrams = datagrams(ctx, d, cfg.Timeout.D(), finish.Sub(e.start))
	return res, nil
}

// datagrams asks a datagram protocol's Dialer its counts, once its
// connections are closed, waiting for its receivers' answers at most
// settleBound past the timeout.
func datagrams(ctx context.Context, d protocol.Dialer, timeout, span time.Duration) *results.Datagrams {
	dc, ok := d.(protocol.DatagramCounter)
	if !ok {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+settleBound)
	defer cancel()
	g, ok := dc.Datagrams(sctx)
	if !ok {
		return nil
	}
	return &results.Datagrams{Sent: g.Sent, Received: g.Received, ReceivedBytes: g.ReceivedBytes,
		Lost: g.Lost(), Unknown: g.Unknown, Span: results.Duration(span)}
}

// settleBound bounds the wait for a UDP sink's count past the timeout.
const settleBound = 10 * time.Second

// SpareP reports whether Run drives cfg on event loops: GOMAXPROCS one
// above cfg.Procs then lets them wait for events holding their Ps.
func SpareP(cfg Config, d protocol.Dialer) bool {
	_, loop, err := chooseDriver(cfg, d)
	return loop && err == nil
}

// LoopCannot names what in cfg the event loop cannot drive, for a run
// SpareP refuses, e.g. "--new-conn over TLS (…)". The names are the flags'.
func LoopCannot(cfg Config) string {
	proto := cfg.Protocol
	switch {
	case runtime.GOOS != "linux":
		return "anything on " + runtime.GOOS + " (it needs Linux's epoll)"
	case cfg.Client != "":
		return "--client " + cfg.Client + " (the reference library opens and drives its own connections)"
	case cfg.NewConn:
		over := "TLS"
		switch {
		case proto == "h2" || proto == "h2c":
			over = "HTTP/2"
		case proto == "grpc":
			over = "gRPC"
		}
		return "--new-conn over " + over + " (the loop opens a connection per request only for plaintext HTTP/1.1 and TCP)"
	case cfg.Mix != nil && cfg.Mix.Hosts != nil:
		return "a request mix on several hosts (a loop drives one host)"
	case cfg.NetNS != "":
		return "-p " + proto + " from --netns (in a namespace the loop drives only plaintext HTTP/1.1 and TCP)"
	case cfg.Streams > 1:
		return fmt.Sprintf("%d streams per connection over -p %s", cfg.Streams, proto)
	default:
		return "-p " + proto + " with these options"
	}
}

// preflightHosts opens a connection to each host of hd but the first
// (Run's own preflight), and closes it: a host that refuses is an error
// that names it.
func preflightHosts(ctx context.Context, cfg Config, hd protocol.HostDialer) error {
	for h := 1; h < hd.Hosts(); h++ {
		dctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
		c, err := hd.Host(h).Dial(dctx)
		cancel()
		if err != nil {
			return fmt.Errorf("cannot connect to %s (host %d of the request mix's %d): %w", hd.Origin(h), h+1, hd.Hosts(), err)
		}
		c.Close()
	}
	return nil
}

// loopDialer is what an event loop connects with: a SessionDialer (a
// request at a time per connection) or a MuxDialer (Streams at once).
type loopDialer struct {
	sd protocol.SessionDialer
	md protocol.MuxDialer
}

// chooseDriver picks the event loop where the protocol allows it and the
// configuration asks for it (the default), goroutines otherwise.
func chooseDriver(cfg Config, d protocol.Dialer) (loopDialer, bool, error) {
	var ld loopDialer
	can := false
	if sd, ok := d.(protocol.SessionDialer); ok && sd.Sessions() && cfg.Streams <= 1 {
		ld.sd, can = sd, true
	} else if md, ok := d.(protocol.MuxDialer); ok && loopMux(md) && !cfg.NewConn {
		ld.md, can = md, true
	}
	can = can && loopSupported && cfg.ConnSchedule == nil
	switch cfg.Driver {
	case DriverGoroutines:
		return loopDialer{}, false, nil
	case DriverLoop:
		if hd, ok := d.(protocol.HostDialer); ok {
			what := LoopCannot(cfg)
			if cfg.Mix == nil || cfg.Mix.Hosts == nil { // LoopCannot cannot tell from cfg
				what = fmt.Sprintf("a request mix on %d hosts (a loop drives one host)", hd.Hosts())
			}
			return loopDialer{}, false, loopRefusal(what)
		}
		if !can {
			return loopDialer{}, false, loopRefusal(LoopCannot(cfg))
		}
	}
	return ld, can, nil
}

// CheckDriver is Run's refusal of cfg over d, or nil, for a caller that
// wants it before anything else (loadgen run: before its header): --driver
// loop for what the event loop cannot drive (LoopCannot names it).
func CheckDriver(cfg Config, d protocol.Dialer) error {
	_, _, err := chooseDriver(cfg, d)
	return err
}

// loopRefusal is the one error of --driver loop for what the event loop
// cannot drive (what: LoopCannot's words).
func loopRefusal(what string) error {
	return fmt.Errorf("--driver loop cannot drive %s: use --driver goroutines, or leave out --driver to take the loop where it can", what)
}

// loopMux tells whether a loop can drive md's connections: opened by
// Open (over TLS), or by Socket (Sessions).
func loopMux(md protocol.MuxDialer) bool {
	if mo, ok := md.(protocol.MuxOpener); ok && mo.Opens() {
		return true
	}
	return md.Sessions()
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

// endedOnTime reports whether the run stopped because its window ended, not
// cut short. A request of the open loop due before the end, that a free
// worker or connection holds when it gets to it, is then still sent: it is
// part of the schedule, and its latency counts how late it went. (Without
// this a generator a few milliseconds late at the end — a busy machine —
// would report the schedule's last requests as never started.) Requests due
// when no connection is free stay unsent, as they would have been.
func (e *engine) endedOnTime() bool {
	return e.ended.Load() && !e.aborted.Load()
}

// abort discards in-flight requests.
func (e *engine) abort() {
	e.aborted.Store(true)
	e.stopping.Store(true)
	e.drv.interrupt()
	e.drv.abort()
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
