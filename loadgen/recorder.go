package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// maxStatus bounds the status codes counted exactly; others land in 0.
const maxStatus = 600

// shardsPerProc sets how many shards a run has: this many per OS thread
// running Go code, so that two workers recording at the same instant on two
// processors rarely share a shard's lock.
const shardsPerProc = 2

// shard holds the statistics of a fixed group of workers. A histogram costs
// about 150 KiB, so memory is per shard, never per connection: ten thousand
// connections share a handful of shards (wrk2 keeps one histogram per
// thread for the same reason). Workers record under the shard's mutex,
// held for a few hundred nanoseconds, and the reporter takes it only to
// swap an interval histogram or to read the error counts.
type shard struct {
	mu    sync.Mutex
	index int // its place among the run's shards (a request mix's statistics go by it)
	// Latency from the intended start (open loop) or the send (closed
	// loop): answered requests and failed ones apart, so that both are
	// reported; Summary.Latency is their union.
	succeeded, failed *hist.Histogram
	uncorrected       *hist.Histogram // open loop only: every request, from its actual send
	connect           *hist.Histogram
	status            [maxStatus]int64
	errs              [protocol.NumErrClasses]int64
	bytesRead         int64
	bytesWrite        int64
	established       int64
	measured          int64 // established in the measured window
	failedDials       int64
	failedMeasured    int64 // failed in the measured window
	sent              int64 // paced sends in the window
	late              int64
	maxLag            time.Duration
	inFlight          int64     // aborted by a stop
	lastOK            time.Time // when the last request succeeded (answered, not an error status)

	// Interval histograms for the log (every request), swapped by the
	// reporter for the spare pair it keeps, so no interval allocates.
	ivLatency, ivUncorrected *hist.Histogram
	// The warm-up's interval histogram and counts (timeline.go), with a
	// warm-up only: its requests count in nothing else.
	wuLatency *hist.Histogram
	wu        ivCounts
	// msgs are the messages of streamed answers (messages.go); nil when
	// the protocol's answers are not streams.
	msgs *messageStats
	_    [64]byte // keep shards' hot fields off each other's cache lines
}

func newShard(openLoop, intervals bool) *shard {
	s := &shard{succeeded: hist.New(), failed: hist.New(), connect: hist.New()}
	if openLoop {
		s.uncorrected = hist.New()
	}
	s.ivLatency = hist.New() // every run's timeline needs it
	if intervals && openLoop {
		s.ivUncorrected = hist.New()
	}
	return s
}

// counter is one thread's count of answered requests, read without a lock
// by the 100 ms rate sampler (wrk's Req/Sec).
type counter struct {
	n atomic.Int64
	_ [56]byte
}

// response records one answered request (any status). latency is from the
// intended (or actual) start, service from the actual start.
func (s *shard) response(o *protocol.Outcome, done time.Time, latency, service time.Duration) {
	st := o.Status
	if st < 0 || st >= maxStatus {
		st = 0
	}
	s.mu.Lock()
	s.succeeded.Record(latency)
	s.recordAll(latency, service)
	s.status[st]++
	if o.Err != protocol.None {
		s.errs[o.Err]++
	} else if done.After(s.lastOK) {
		s.lastOK = done
	}
	s.bytesRead += o.Bytes
	s.bytesWrite += o.Written
	s.mu.Unlock()
}

// failure records a request that was sent and got no answer: it counts in
// the latency at the time it failed, so the requests that suffered most are
// never the ones left out.
func (s *shard) failure(o *protocol.Outcome, latency, service time.Duration) {
	s.mu.Lock()
	s.failed.Record(latency)
	s.recordAll(latency, service)
	s.errs[o.Err]++
	s.bytesRead += o.Bytes
	s.bytesWrite += o.Written
	s.mu.Unlock()
}

// request is one request's times as its driver saw them: what settle
// needs. The driver fills it in as the request goes.
type request struct {
	intended    time.Time // open loop: its intended start, from the pacer
	first, sent time.Time // when its first and its last try started (try)
	deadline    time.Time // its last try's start + the timeout; zero: none
	pick        int32     // the request of a mix it sends; -1 without
}

// try marks a try of r starting at t: at its connect with a connection
// per request, else at its send. A request the peer left unprocessed
// (Outcome.Unsent) is tried again: its lag is its first try's, its
// latency without the correction runs from its last.
func (r *request) try(t time.Time) {
	r.sent = t
	if r.first.IsZero() {
		r.first = t
	}
}

// settle applies the engine's rules to request r, which ended at done
// with outcome o, records it in sh (an answer in n too) and reports
// whether the connection it ran on is to be dropped; newConn: each
// request has a connection of its own. Both drivers call it, so that
// they keep only how they wait. It allocates nothing.
//
// The timeout is a hard bound: an answer after r's deadline is a timeout
// (o says so), and a timeout counts at the deadline, however late the
// timer fired. Latency runs to done from the intended start, open loop,
// or from the send, closed loop; without the correction, from the send.
// A request that started before the measured window counts in the
// warm-up only. Open loop, a measured request's lag is how late its first
// try started. A request of a mix counts in its name's statistics too. A
// failure leaves its connection in an unknown state; an answer in full
// after the timeout left it clean.
func (e *engine) settle(sh *shard, n *counter, r *request, o *protocol.Outcome, done time.Time, newConn bool) (drop bool) {
	failed := o.Err != protocol.None && o.Err != protocol.Status
	answeredLate := false
	if !r.deadline.IsZero() && done.After(r.deadline) {
		if !failed {
			o.Err, failed, answeredLate = protocol.Timeout, true, true
		}
		if o.Err == protocol.Timeout {
			done = r.deadline
		}
	}
	open := e.pacer != nil
	from := r.sent
	if open {
		from = r.intended
	}
	latency := done.Sub(from)
	if from.Before(e.measure) {
		sh.warm(o, failed, latency) // the timeline's warm-up
	} else {
		if open {
			sh.paced(r.first.Sub(r.intended))
		}
		if failed {
			sh.failure(o, latency, done.Sub(r.sent))
		} else {
			sh.response(o, done, latency, done.Sub(r.sent))
			n.n.Add(1)
		}
		if e.mix != nil {
			e.mix.record(sh, r.pick, o, latency, failed)
		}
	}
	return o.Done || newConn || (failed && !answeredLate)
}

// recordAll adds a request to the histograms of every request. s.mu is held.
func (s *shard) recordAll(latency, service time.Duration) {
	if s.uncorrected != nil {
		s.uncorrected.Record(service)
	}
	if s.ivLatency != nil {
		s.ivLatency.Record(latency)
		if s.ivUncorrected != nil {
			s.ivUncorrected.Record(service)
		}
	}
}

func (s *shard) paced(lag time.Duration) {
	s.mu.Lock()
	s.sent++
	if lag > results.LateAfter {
		s.late++
	}
	if lag > s.maxLag {
		s.maxLag = lag
	}
	s.mu.Unlock()
}

// dialed counts a connect: established (measured when in the window) or
// failed (a connect error of the window when measuring, unless the request
// it was for counts the failure itself: countErr false).
func (s *shard) dialed(d time.Duration, err error, measuring bool) {
	s.dialedErr(d, err, measuring, measuring)
}

func (s *shard) dialedErr(d time.Duration, err error, measuring, countErr bool) {
	s.mu.Lock()
	if err != nil {
		s.failedDials++
		if measuring {
			s.failedMeasured++
		}
		if countErr {
			s.errs[protocol.Connect]++
		}
	} else {
		s.established++
		if measuring {
			s.measured++
		}
		s.connect.Record(d)
	}
	s.mu.Unlock()
}

func (s *shard) aborted() {
	s.mu.Lock()
	s.inFlight++
	s.mu.Unlock()
}

// swapInterval hands the interval histograms to the reporter, installing the
// given empty ones, with the shard's counts so far (answered, failures by
// class) read at the same instant: an interval's counts are then of the
// requests its histograms hold.
func (s *shard) swapInterval(lat, unc *hist.Histogram) (*hist.Histogram, *hist.Histogram, ivCounts) {
	s.mu.Lock()
	oldL, oldU := s.ivLatency, s.ivUncorrected
	s.ivLatency, s.ivUncorrected = lat, unc
	c := ivCounts{answered: s.succeeded.Count(), errs: s.errs}
	s.mu.Unlock()
	return oldL, oldU, c
}

func (s *shard) errors() int64 {
	var n int64
	s.mu.Lock()
	for c := protocol.Connect; c < protocol.NumErrClasses; c++ {
		n += s.errs[c]
	}
	s.mu.Unlock()
	return n
}
