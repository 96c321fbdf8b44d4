package loadgen

import (
	"context"
	"fmt"
	"maps"
	"math"
	"time"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// reporter runs on the goroutine that called Run: it ends the run on time,
// samples each thread's request rate every 100 ms (wrk's Req/Sec), cuts
// interval histograms for the log, and builds the result at the end.
type reporter struct {
	e         *engine
	usageFrom usage
	memory    peakMemory
	measuring bool

	prev   []int64   // per thread: requests at the last sample
	prevAt time.Time // time of the last sample
	rps    spreadAcc // every thread's every sample

	// The longest stretch of samples in which nothing was answered and
	// requests failed: an outage, which in closed loop costs few errors
	// (failed connects back off) and must not hide behind their share.
	lastAnswered, lastErrors int64
	quietFrom                time.Time // start of the current stretch with nothing answered; zero when answers come
	quietErrors              int64     // failures in it
	outage                   time.Duration
	outageAt                 time.Time

	log       *hist.LogWriter
	logErr    error
	ivFrom    time.Time
	ivLat     *hist.Histogram // the interval's merged histograms
	ivUnc     *hist.Histogram
	spareLat  *hist.Histogram // swapped into a shard for the next interval
	spareUnc  *hist.Histogram
	lastProg  time.Time
	lastCount int64

	tl timeline // the run over time, and --abort-on-fail's window (timeline.go)

	// A staged schedule's stages, and each one's measured intervals
	// (stages.go).
	stages *pace.Stages
	stAcc  []stageAcc
}

func newReporter(e *engine) *reporter {
	r := &reporter{e: e, prev: make([]int64, len(e.counts)), usageFrom: readUsage()}
	if e.cfg.HistLog != nil {
		r.log, r.logErr = hist.NewLogWriter(e.cfg.HistLog, e.measure,
			fmt.Sprintf("loadgen %s: %s, %d connections", Version(), e.cfg.Target, e.cfg.Connections))
	}
	r.ivLat, r.spareLat = hist.New(), hist.New() // the timeline's, and the log's
	if (e.cfg.HistLog != nil || e.cfg.LiveLatency) && e.pacer != nil {
		r.ivUnc, r.spareUnc = hist.New(), hist.New()
	}
	r.tl.init(e)
	if r.stages = stagesOf(e.pacer); r.stages == nil {
		r.stages = e.cfg.ConnSchedule
	}
	if r.stages != nil {
		r.stAcc = make([]stageAcc, len(r.stages.List()))
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
			if r.tl.abort != "" {
				return true // --abort-on-fail: stopped as an interrupt stops it
			}
		}
	}
}

func (r *reporter) answered() int64 {
	var n int64
	for i := range r.e.counts {
		n += r.e.counts[i].n.Load()
	}
	return n
}

func (r *reporter) sample(now time.Time) {
	e := r.e
	if now.Before(e.measure) {
		r.warmup(now)
		return
	}
	if !r.measuring {
		r.warmupEnd()
		// The measured window starts: the generator's cost is counted from here.
		r.measuring = true
		r.usageFrom = readUsage()
		r.memory.start()
		r.prevAt, r.ivFrom, r.lastProg = e.measure, e.measure, e.measure
	}
	if !r.memory.reset {
		r.memory.sample()
	}
	if dt := now.Sub(r.prevAt); dt >= sampleEvery/2 {
		var answered int64
		for t := range e.counts {
			n := e.counts[t].n.Load()
			r.rps.add(float64(n-r.prev[t]) / dt.Seconds())
			r.prev[t] = n
			answered += n
		}
		r.quiet(r.prevAt, now, answered)
		r.prevAt = now
	}
	if now.Sub(r.ivFrom) >= e.cfg.Interval {
		r.interval(now)
	}
}

// quiet follows the stretches with nothing answered between samples (from
// the sample at prev to now), keeping the longest in which requests
// failed.
func (r *reporter) quiet(prev, now time.Time, answered int64) {
	var errs int64
	for _, sh := range r.e.shards {
		errs += sh.errors()
	}
	if answered != r.lastAnswered {
		r.quietFrom, r.quietErrors = time.Time{}, 0
	} else {
		if r.quietFrom.IsZero() {
			r.quietFrom = prev
		}
		r.quietErrors += errs - r.lastErrors
		if d := now.Sub(r.quietFrom); r.quietErrors > 0 && d > r.outage {
			r.outage, r.outageAt = d, r.quietFrom
		}
	}
	r.lastAnswered, r.lastErrors = answered, errs
}

// interval writes the interval histograms to the log and reports progress.
// Each shard's interval histograms are swapped for the spare pair, merged
// and reset to be the next spare: no interval allocates. The counts the
// timeline keeps are each shard's at its swap.
func (r *reporter) interval(now time.Time) {
	e := r.e
	if r.ivLat != nil {
		var total ivCounts
		for _, sh := range e.shards {
			lat, unc, c := sh.swapInterval(r.spareLat, r.spareUnc)
			total.add(c)
			r.ivLat.Merge(lat)
			lat.Reset()
			if unc != nil {
				r.ivUnc.Merge(unc)
				unc.Reset()
			}
			r.spareLat, r.spareUnc = lat, unc
		}
		if r.measuring {
			r.cut(now, total)
		}
		if r.log != nil && r.logErr == nil {
			r.logErr = r.log.Write(r.ivLat, r.ivFrom, now, "")
			if r.ivUnc != nil && r.logErr == nil {
				r.logErr = r.log.Write(r.ivUnc, r.ivFrom, now, "uncorrected")
			}
		}
	}
	if e.cfg.Progress != nil && !r.tl.quiet {
		n := r.answered()
		p := Progress{Elapsed: now.Sub(e.measure), Total: e.cfg.Duration.D(), Requests: n, Errors: r.errorsSoFar()}
		if dt := now.Sub(r.lastProg).Seconds(); dt > 0 {
			p.RPS = float64(n-r.lastCount) / dt
		}
		if e.cfg.LiveLatency {
			p.Latency = r.ivLat
		}
		r.lastProg, r.lastCount = now, n
		e.cfg.Progress(p)
	}
	if r.ivLat != nil {
		r.ivLat.Reset()
		if r.ivUnc != nil {
			r.ivUnc.Reset()
		}
	}
	r.ivFrom = now
}

func (r *reporter) errorsSoFar() int64 {
	var n int64
	for _, sh := range r.e.shards {
		n += sh.errors()
	}
	return n
}

// result merges every shard into the run's result. Workers have all
// returned, so nothing is read concurrently.
func (r *reporter) result(finish time.Time, interrupted bool) *results.Run {
	e := r.e
	old := r.log != nil && r.logErr == nil || e.cfg.LiveLatency
	if (old || r.measuring) && finish.After(r.ivFrom) && !finish.Before(e.measure) {
		r.tl.quiet, r.tl.final = !old, true // progress as before: only with the log or live latency
		r.interval(finish)                  // the last, partial interval
	}
	r.warmupLast(finish)
	to := readUsage()
	run := &results.Run{
		Schema:      results.SchemaVersion,
		Tool:        "loadgen",
		Labels:      maps.Clone(e.cfg.Labels),
		Config:      e.cfg.Config,
		Env:         Environment(),
		Start:       e.measure,
		End:         finish,
		Generator:   generatorCost(r.usageFrom, to, e.cfg.procs(), max(0, e.cfg.CPUQuota), r.memory.peak()),
		Machine:     machineCost(r.usageFrom, to),
		Interrupted: interrupted,
		Aborted:     r.tl.abort,
		Timeline:    r.tl.done(),
	}
	run.Env.GOMAXPROCS = e.cfg.procs() // the generator's; a loop run's spare P is not
	window := finish.Sub(e.measure)
	if window < 0 {
		window = 0
		run.Notes = append(run.Notes, "stopped during warm-up: nothing was measured")
	}

	succ, fail, conn := hist.New(), hist.New(), hist.New()
	var unc *hist.Histogram
	if e.pacer != nil {
		unc = hist.New()
	}
	s := &run.Summary
	s.Status = map[int]int64{}
	var sent, late int64
	var maxLag time.Duration
	for _, sh := range e.shards {
		succ.Merge(sh.succeeded)
		fail.Merge(sh.failed)
		conn.Merge(sh.connect)
		if unc != nil {
			unc.Merge(sh.uncorrected)
		}
		for code, n := range sh.status {
			if n > 0 {
				s.Status[code] += n
			}
		}
		s.Errors.Connect += sh.errs[protocol.Connect]
		s.Errors.Read += sh.errs[protocol.Read]
		s.Errors.Write += sh.errs[protocol.Write]
		s.Errors.Timeout += sh.errs[protocol.Timeout]
		s.Errors.Status += sh.errs[protocol.Status]
		s.Errors.Protocol += sh.errs[protocol.Protocol]
		s.BytesRead += sh.bytesRead
		s.BytesWritten += sh.bytesWrite
		s.Connections.Established += sh.established
		s.Connections.Measured += sh.measured
		s.Connections.Failed += sh.failedDials
		s.Connections.FailedMeasured += sh.failedMeasured
		s.InFlight += sh.inFlight
		sent += sh.sent
		late += sh.late
		if d := sh.lastOK.Sub(e.measure); !sh.lastOK.IsZero() && d > s.LastOK.D() {
			s.LastOK = results.Duration(d)
		}
		maxLag = max(maxLag, sh.maxLag)
	}
	never := e.drv.unconnected()
	if cc, ok := e.dialer.(protocol.ConnCounter); ok && e.cfg.Driver == DriverGoroutines {
		s.Connections.Established = cc.Opened() - e.preflightOpened
	}
	lat := succ.Clone()
	lat.Merge(fail)
	s.Requests = succ.Count()
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
	if fail.Count() > 0 {
		sl, fl := results.Reduce(succ), results.Reduce(fail)
		s.Succeeded, s.Failed = &sl, &fl
	}
	if conn.Count() > 0 {
		c := results.Reduce(conn)
		s.Connect = &c
	}
	s.Messages = e.messageSummary(window, &run.Histograms)
	s.ThreadRPS = r.rps.spread()
	if r.outage > 0 {
		s.Outage, s.OutageAt = results.Duration(r.outage), results.Duration(max(0, r.outageAt.Sub(e.measure)))
	}

	if e.pacer != nil {
		r.pacing(run, finish, sent, late, maxLag)
	}
	s.Stages = r.stageSummaries()

	run.Histograms.Latency, _ = lat.Encode()
	if unc != nil {
		run.Histograms.Uncorrected, _ = unc.Encode()
	}
	if fail.Count() > 0 {
		run.Histograms.Succeeded, _ = succ.Encode()
		run.Histograms.Failed, _ = fail.Encode()
	}
	if conn.Count() > 0 {
		run.Histograms.Connect, _ = conn.Encode()
	}
	if g := run.Generator; g.Saturated {
		of := fmt.Sprintf("%.0f CPU(s)", g.CPUs)
		if g.Quota > 0 && g.Quota <= g.CPUs {
			of = fmt.Sprintf("%.2g CPU(s) of its cgroup's quota", g.Quota)
		}
		run.Notes = append(run.Notes, fmt.Sprintf(
			"the generator used %.0f%% of the %s it was allowed: the result may measure the generator, not the target",
			100*g.Utilization, of))
	}
	if r.logErr != nil {
		run.Notes = append(run.Notes, "histogram log: "+r.logErr.Error())
	}
	if lat.Overflow() > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%d latencies above 60 s were recorded as 60 s", lat.Overflow()))
	}
	if e.mix != nil {
		e.mix.result(run) // the figures by request name (requestmix.go)
	}
	// Closed loop for a duration: every worker connects before the start,
	// so one without a connection never got to start. (Paced or counted
	// runs leave workers idle by design.)
	if n := never; n > 0 && e.pacer == nil && e.cfg.Requests == 0 && !interrupted {
		run.Notes = append(run.Notes, fmt.Sprintf(
			"%d of %d workers never had a connection: the run ended before they were opened (too many for the generator or the target to open in time, or a file descriptor limit: ulimit -n)",
			n, e.cfg.Connections*max(1, e.cfg.Streams)))
	}
	return run
}

// pacing reports how the open loop kept its schedule. The asked rate is
// the schedule's mean over the measured window (a ramp's is not its first
// rate), with its rates at the window's start and end.
func (r *reporter) pacing(run *results.Run, finish time.Time, sent, late int64, maxLag time.Duration) {
	e := r.e
	p := &results.Pacing{Sent: sent, Late: late, MaxLag: results.Duration(maxLag)}
	if e.cfg.Driver == DriverLoop {
		p.Slack = results.Duration(e.slack)
	}
	// The schedule's window is the planned one, unless the run was cut
	// short (workers run out of schedule just before its end).
	sendEnd := finish
	if !e.end.IsZero() && (e.end.Before(sendEnd) || !run.Interrupted) {
		sendEnd = e.end
	}
	from, to := e.measure.Sub(e.start), sendEnd.Sub(e.start)
	p.Asked = e.pacer.Rate(from) // a constant rate: exactly as asked
	if w := sendEnd.Sub(e.measure); w > 0 {
		want := expected(e.pacer, from, to)
		if run.Config.Schedule != "" {
			p.Asked = float64(want) / w.Seconds()
		}
		p.Achieved = float64(sent) / w.Seconds()
		if e.cfg.Requests > 0 {
			want = min(want, e.cfg.Requests)
		}
		p.Unsent = max(0, want-sent)
	}
	if run.Config.Schedule != "" {
		p.StartRate, p.EndRate = e.pacer.Rate(from), e.pacer.Rate(to)
	}
	run.Config.Rate = p.Asked
	run.Summary.Pacing = p
	if p.Unsent > 0 || p.Late > 0 {
		note := fmt.Sprintf(
			"the schedule slipped: %d of %d requests started more than %v late, %d never started; latency counts the wait (coordinated omission corrected)",
			p.Late, p.Sent, results.LateAfter, p.Unsent)
		if c := run.Summary.Errors.Connect; c > 0 && p.Unsent > 0 {
			// Not the generator's doing: requests wait for a connection.
			note += fmt.Sprintf("; %d connects to the target failed meanwhile, and a request that finds no connection is not sent: the target's failures, counted as connect errors", c)
		}
		run.Notes = append(run.Notes, note)
	}
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
