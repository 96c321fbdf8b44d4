package loadgen

import (
	"context"
	"fmt"
	"math"
	"time"

	"loadgen/loadgen/proto"
	"loadgen/results"
	"loadgen/results/hist"
)

// reporter runs on the goroutine that called Run: it ends the run on time,
// samples each thread's request rate every 100 ms (wrk's Req/Sec), cuts
// interval histograms for the log, and builds the result at the end.
type reporter struct {
	e         *engine
	usageFrom usage
	measuring bool

	prev   []int64   // per thread: requests at the last sample
	prevAt time.Time // time of the last sample
	rps    spreadAcc // every thread's every sample

	log       *hist.LogWriter
	logErr    error
	ivFrom    time.Time
	ivLat     *hist.Histogram
	ivUnc     *hist.Histogram
	lastProg  time.Time
	lastCount int64
}

func newReporter(e *engine) *reporter {
	r := &reporter{e: e, prev: make([]int64, len(e.threads)), usageFrom: readUsage()}
	if e.cfg.HistLog != nil {
		r.log, r.logErr = hist.NewLogWriter(e.cfg.HistLog, e.measure,
			fmt.Sprintf("loadgen %s: %s, %d connections", Version(), e.cfg.Target, e.cfg.Connections))
		r.ivLat = hist.New()
		if e.pacer != nil {
			r.ivUnc = hist.New()
		}
	}
	return r
}

// loop returns when the run should stop: true if ctx was cancelled.
func (r *reporter) loop(ctx context.Context, allDone <-chan struct{}) (interrupted bool) {
	e := r.e
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var endC <-chan time.Time
	if !e.end.IsZero() {
		t := time.NewTimer(time.Until(e.end))
		defer t.Stop()
		endC = t.C
	}
	for {
		select {
		case <-ctx.Done():
			r.sample(time.Now())
			return true
		case <-allDone:
			r.sample(time.Now())
			return false
		case now := <-endC:
			r.sample(now)
			return false
		case now := <-tick.C:
			r.sample(now)
		}
	}
}

func (r *reporter) sample(now time.Time) {
	e := r.e
	if now.Before(e.measure) {
		return
	}
	if !r.measuring {
		// The measured window starts: the generator's cost is counted from here.
		r.measuring = true
		r.usageFrom = readUsage()
		r.prevAt, r.ivFrom, r.lastProg = e.measure, e.measure, e.measure
	}
	if dt := now.Sub(r.prevAt); dt >= sampleEvery/2 {
		for t, ws := range e.threads {
			var n int64
			for _, w := range ws {
				n += w.rec.requests.Load()
			}
			r.rps.add(float64(n-r.prev[t]) / dt.Seconds())
			r.prev[t] = n
		}
		r.prevAt = now
	}
	if now.Sub(r.ivFrom) >= e.cfg.Interval {
		r.interval(now)
	}
}

// interval writes the interval histograms to the log and reports progress.
func (r *reporter) interval(now time.Time) {
	e := r.e
	if r.log != nil && r.logErr == nil {
		for _, w := range e.workers {
			lat, unc := w.rec.swapInterval(hist.New(), newIf(r.ivUnc != nil))
			r.ivLat.Merge(lat)
			if unc != nil {
				r.ivUnc.Merge(unc)
			}
		}
		r.logErr = r.log.Write(r.ivLat, r.ivFrom, now, "")
		if r.ivUnc != nil && r.logErr == nil {
			r.logErr = r.log.Write(r.ivUnc, r.ivFrom, now, "uncorrected")
			r.ivUnc.Reset()
		}
		r.ivLat.Reset()
	}
	if e.cfg.Progress != nil {
		var n, errs int64
		for _, w := range e.workers {
			n += w.rec.requests.Load()
		}
		errs = r.errorsSoFar()
		p := Progress{Elapsed: now.Sub(e.measure), Total: e.cfg.Duration.D(), Requests: n, Errors: errs}
		if dt := now.Sub(r.lastProg).Seconds(); dt > 0 {
			p.RPS = float64(n-r.lastCount) / dt
		}
		r.lastProg, r.lastCount = now, n
		e.cfg.Progress(p)
	}
	r.ivFrom = now
}

func (r *reporter) errorsSoFar() int64 {
	var n int64
	for _, w := range r.e.workers {
		w.rec.mu.Lock()
		for c := proto.Connect; c < proto.NumErrClasses; c++ {
			n += w.rec.errs[c]
		}
		w.rec.mu.Unlock()
	}
	return n
}

func newIf(ok bool) *hist.Histogram {
	if ok {
		return hist.New()
	}
	return nil
}

// result merges every worker's recorder into the run's result. Workers have
// all returned, so nothing is read concurrently.
func (r *reporter) result(finish time.Time, interrupted bool) *results.Run {
	e := r.e
	if r.log != nil && r.logErr == nil && finish.After(r.ivFrom) && !finish.Before(e.measure) {
		r.interval(finish) // the last, partial interval
	}
	cost := cost(r.usageFrom, readUsage())
	run := &results.Run{
		Schema:      results.SchemaVersion,
		Tool:        "loadgen",
		Config:      e.cfg.Config,
		Env:         Environment(),
		Start:       e.measure,
		End:         finish,
		Generator:   cost,
		Interrupted: interrupted,
	}
	if e.pacer != nil {
		run.Config.Rate = e.pacer.Rate(0)
	}
	window := finish.Sub(e.measure)
	if window < 0 {
		window = 0
		run.Notes = append(run.Notes, "stopped during warm-up: nothing was measured")
	}

	lat, conn := hist.New(), hist.New()
	var unc *hist.Histogram
	if e.pacer != nil {
		unc = hist.New()
	}
	s := &run.Summary
	s.Status = map[int]int64{}
	var sent, late int64
	var maxLag time.Duration
	var never int // workers that never had a connection
	for _, w := range e.workers {
		rec := w.rec
		lat.Merge(rec.latency)
		conn.Merge(rec.connect)
		if unc != nil {
			unc.Merge(rec.uncorrected)
		}
		for code, n := range rec.status {
			if n > 0 {
				s.Status[code] += n
			}
		}
		s.Errors.Connect += rec.errs[proto.Connect]
		s.Errors.Read += rec.errs[proto.Read]
		s.Errors.Write += rec.errs[proto.Write]
		s.Errors.Timeout += rec.errs[proto.Timeout]
		s.Errors.Status += rec.errs[proto.Status]
		s.Errors.Protocol += rec.errs[proto.Protocol]
		s.BytesRead += rec.bytesRead
		s.BytesWritten += rec.bytesWrite
		s.Connections.Established += rec.established
		if rec.established == 0 && rec.failed == 0 {
			never++
		}
		s.Connections.Measured += rec.measured
		s.Connections.Failed += rec.failed
		s.InFlight += rec.inFlight
		sent += rec.sent
		late += rec.late
		maxLag = max(maxLag, rec.maxLag)
	}
	if cc, ok := e.dialer.(proto.ConnCounter); ok {
		s.Connections.Established = cc.Opened()
	}
	s.Requests = lat.Count()
	s.Non2xx3xx = s.Errors.Status
	s.Duration = results.Duration(window)
	if sec := window.Seconds(); sec > 0 {
		s.RPS = float64(s.Requests) / sec
		s.ReadPerSec = float64(s.BytesRead) / sec
		s.WritePerSec = float64(s.BytesWritten) / sec
	}
	s.Latency = results.Reduce(lat)
	if unc != nil {
		u := results.Reduce(unc)
		s.Uncorrected = &u
	}
	if conn.Count() > 0 {
		c := results.Reduce(conn)
		s.Connect = &c
	}
	s.ThreadRPS = r.rps.spread()

	if e.pacer != nil {
		p := &results.Pacing{Asked: e.pacer.Rate(0), Sent: sent, Late: late, MaxLag: results.Duration(maxLag)}
		sendEnd := finish
		if !e.end.IsZero() && e.end.Before(sendEnd) {
			sendEnd = e.end
		}
		if w := sendEnd.Sub(e.measure); w > 0 {
			p.Achieved = float64(sent) / w.Seconds()
			want := expected(e.pacer, e.measure.Sub(e.start), sendEnd.Sub(e.start))
			if e.cfg.Requests > 0 {
				want = min(want, e.cfg.Requests)
			}
			p.Unsent = max(0, want-sent)
		}
		s.Pacing = p
		if p.Unsent > 0 || p.Late > 0 {
			run.Notes = append(run.Notes, fmt.Sprintf(
				"the schedule slipped: %d of %d requests started more than %v late, %d never started; latency counts the wait (coordinated omission corrected)",
				p.Late, p.Sent, results.LateAfter, p.Unsent))
		}
	}

	if hs, err := lat.Encode(); err == nil {
		run.Histograms.Latency = hs
	}
	if unc != nil {
		run.Histograms.Uncorrected, _ = unc.Encode()
	}
	if conn.Count() > 0 {
		run.Histograms.Connect, _ = conn.Encode()
	}
	if cost.Saturated {
		run.Notes = append(run.Notes, fmt.Sprintf(
			"the generator used %.0f%% of the %.0f CPU(s) it was allowed: the result may measure the generator, not the target",
			100*cost.Utilization, cost.CPUs))
	}
	if r.logErr != nil {
		run.Notes = append(run.Notes, "histogram log: "+r.logErr.Error())
	}
	if lat.Overflow() > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%d latencies above 60 s were recorded as 60 s", lat.Overflow()))
	}
	// Closed loop for a duration: every worker connects at its first
	// request, so one without a connection never got to start. (Paced or
	// counted runs leave workers idle by design.)
	if n := never; n > 0 && e.pacer == nil && e.cfg.Requests == 0 && !interrupted {
		run.Notes = append(run.Notes, fmt.Sprintf(
			"%d of %d workers never had a connection: the run ended before they were opened (too many for the generator or the target to open in time, or a file descriptor limit: ulimit -n); a --warmup opens them before the measured window",
			n, len(e.workers)))
	}
	return run
}

// spreadAcc accumulates samples in fixed memory: mean, standard deviation
// and max exactly (Welford), the share within one standard deviation from a
// uniform reservoir of at most reservoirSize samples.
type spreadAcc struct {
	n        int
	mean, m2 float64
	max      float64
	res      []float64
	rng      uint64
}

const reservoirSize = 1 << 15

func (a *spreadAcc) add(x float64) {
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
	a.max = math.Max(a.max, x)
	if len(a.res) < reservoirSize {
		a.res = append(a.res, x)
		return
	}
	a.rng = a.rng*6364136223846793005 + 1442695040888963407 // LCG: deterministic, no global state
	if j := int((a.rng >> 33) % uint64(a.n)); j < reservoirSize {
		a.res[j] = x
	}
}

func (a *spreadAcc) spread() results.Spread {
	s := results.Spread{Samples: a.n, Mean: a.mean, Max: a.max}
	if a.n > 1 {
		s.StdDev = math.Sqrt(a.m2 / float64(a.n-1))
	}
	if len(a.res) > 0 {
		in := 0
		for _, x := range a.res {
			if math.Abs(x-s.Mean) <= s.StdDev {
				in++
			}
		}
		s.WithinStdDev = 100 * float64(in) / float64(len(a.res))
	}
	return s
}
