package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/proto"
	"loadgen/results"
	"loadgen/results/hist"
)

// maxStatus bounds the status codes counted exactly; others land in 0.
const maxStatus = 600

// recorder is one worker's statistics. Only its worker writes; the reporter
// reads under the same mutex, which is never contended on the hot path but
// for the moment a reporter swaps an interval histogram.
type recorder struct {
	mu          sync.Mutex
	latency     *hist.Histogram // corrected (open loop) or plain
	uncorrected *hist.Histogram // open loop only
	connect     *hist.Histogram
	status      [maxStatus]int64
	errs        [proto.NumErrClasses]int64
	bytesRead   int64
	bytesWrite  int64
	established int64
	measured    int64 // established in the measured window
	failed      int64
	sent        int64 // paced sends in the window
	late        int64
	maxLag      time.Duration
	inFlight    int64 // aborted by a stop

	// Read without the lock by the 100 ms rate sampler.
	requests atomic.Int64

	// Interval histograms for the log, swapped by the reporter.
	ivLatency, ivUncorrected *hist.Histogram
	_                        [64]byte // keep workers' hot fields off each other's cache lines
}

func newRecorder(openLoop, intervals bool) *recorder {
	r := &recorder{latency: hist.New(), connect: hist.New()}
	if openLoop {
		r.uncorrected = hist.New()
	}
	if intervals {
		r.ivLatency = hist.New()
		if openLoop {
			r.ivUncorrected = hist.New()
		}
	}
	return r
}

// response records one answered request. latency is from the intended (or
// actual) start, service from the actual start.
func (r *recorder) response(o *proto.Outcome, latency, service time.Duration) {
	r.mu.Lock()
	r.latency.Record(latency)
	if r.uncorrected != nil {
		r.uncorrected.Record(service)
	}
	if r.ivLatency != nil {
		r.ivLatency.Record(latency)
		if r.ivUncorrected != nil {
			r.ivUncorrected.Record(service)
		}
	}
	s := o.Status
	if s < 0 || s >= maxStatus {
		s = 0
	}
	r.status[s]++
	if o.Err != proto.None {
		r.errs[o.Err]++
	}
	r.bytesRead += o.Bytes
	r.bytesWrite += o.Written
	r.mu.Unlock()
	r.requests.Add(1)
}

// failure records a request that got no response.
func (r *recorder) failure(o *proto.Outcome) {
	r.mu.Lock()
	r.errs[o.Err]++
	r.bytesRead += o.Bytes
	r.bytesWrite += o.Written
	r.mu.Unlock()
}

func (r *recorder) paced(lag time.Duration) {
	r.mu.Lock()
	r.sent++
	if lag > results.LateAfter {
		r.late++
	}
	if lag > r.maxLag {
		r.maxLag = lag
	}
	r.mu.Unlock()
}

func (r *recorder) dialed(d time.Duration, err error, measuring bool) {
	r.mu.Lock()
	if err != nil {
		r.failed++
		if measuring {
			r.errs[proto.Connect]++
		}
	} else {
		r.established++
		if measuring {
			r.measured++
		}
		r.connect.Record(d)
	}
	r.mu.Unlock()
}

// swapInterval hands the interval histograms to the reporter, installing the
// given empty ones.
func (r *recorder) swapInterval(lat, unc *hist.Histogram) (*hist.Histogram, *hist.Histogram) {
	r.mu.Lock()
	oldL, oldU := r.ivLatency, r.ivUncorrected
	r.ivLatency, r.ivUncorrected = lat, unc
	r.mu.Unlock()
	return oldL, oldU
}
