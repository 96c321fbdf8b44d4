package loadgen

import (
	"math"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// The run over time: every reporting interval (Config.Interval, 1 s) the
// reporter cuts the shards' interval histograms (as for the log) with
// their counts, read at the same instant under each shard's lock, and
// keeps one small record of it (results.Interval) — the warm-up's too —
// so that a report can draw the run over time and --abort-on-fail can
// judge its last seconds. An interval's counts and latencies are of the
// same requests. Memory is a record per
// interval, never per request, and the timeline holds at most
// maxTimeline of them: a longer run's records span several intervals.

// maxTimeline bounds a run's timeline: a run planned longer has records of
// several intervals each; one bounded by -n only, which cannot be
// planned, folds its records in pairs when it fills (Interval.Fold).
const maxTimeline = 3600

// DefaultJudgeWindow is how much of a run's end Config.Judge sees: the
// last three intervals.
const DefaultJudgeWindow = 3 * time.Second

// Window is what Config.Judge sees of a run that goes on.
type Window struct {
	// From and To bound the window, from the start of the measured window.
	From, To time.Duration
	// Recent is the window's figures: requests, errors by class, rps and
	// latency (every request that ended in it, as Summary.Latency).
	Recent results.Summary
	// SoFar is the measured window up to To: requests, errors and rps
	// only (no latency).
	SoFar results.Summary
}

// ivCounts are an interval's counts: requests answered (any status) and
// failures by class.
type ivCounts struct {
	answered int64
	errs     [protocol.NumErrClasses]int64
}

func (c *ivCounts) add(o ivCounts) {
	c.answered += o.answered
	for i := range c.errs {
		c.errs[i] += o.errs[i]
	}
}

func (c ivCounts) sub(o ivCounts) ivCounts {
	c.answered -= o.answered
	for i := range c.errs {
		c.errs[i] -= o.errs[i]
	}
	return c
}

func (c ivCounts) errors() results.Errors {
	return results.Errors{Connect: c.errs[protocol.Connect], Read: c.errs[protocol.Read], Write: c.errs[protocol.Write],
		Timeout: c.errs[protocol.Timeout], Status: c.errs[protocol.Status], Protocol: c.errs[protocol.Protocol]}
}

// summary is the counts over d as a Summary: requests, errors, rps.
func (c ivCounts) summary(d time.Duration) results.Summary {
	s := results.Summary{Requests: c.answered, Duration: results.Duration(d), Errors: c.errors()}
	s.Non2xx3xx = s.Errors.Status
	if d > 0 {
		s.RPS = float64(c.answered) / d.Seconds()
	}
	return s
}

// warm records a request of the warm-up, which counts in the timeline's
// warm-up intervals only. Without a warm-up it does nothing.
func (s *shard) warm(o *protocol.Outcome, failed bool, latency time.Duration) {
	s.mu.Lock()
	if s.wuLatency == nil { // no warm-up
		s.mu.Unlock()
		return
	}
	s.wuLatency.Record(latency)
	if failed {
		s.wu.errs[o.Err]++
	} else {
		s.wu.answered++
		if o.Err != protocol.None {
			s.wu.errs[o.Err]++ // an error status
		}
	}
	s.mu.Unlock()
}

// swapWarm hands the warm-up's interval histogram and counts to the
// reporter, installing the given empty histogram.
func (s *shard) swapWarm(h *hist.Histogram) (*hist.Histogram, ivCounts) {
	s.mu.Lock()
	old, c := s.wuLatency, s.wu
	s.wuLatency, s.wu = h, ivCounts{}
	s.mu.Unlock()
	return old, c
}

// timeline is the reporter's record of the run over time.
type timeline struct {
	interval time.Duration
	measure  time.Time
	list     []results.Interval
	k        int // reporting intervals per record (1 but for long runs)

	// The record being gathered when k > 1: its counts, its latencies
	// (acc, merged from each interval's), how many intervals it holds.
	acc     *hist.Histogram
	accFrom time.Time
	accTo   time.Time
	accN    int
	accC    ivCounts
	accWarm bool

	last ivCounts // the measured window's counts at the last cut

	// The warm-up's: since when the current interval counts, a spare
	// histogram to swap into a shard and the merged one.
	wuFrom          time.Time
	wuSpare, wuHist *hist.Histogram

	// --abort-on-fail (Config.Judge): the last intervals, the counts so
	// far, and why the run stopped.
	judge   func(Window) string
	after   time.Duration
	ring    []judged
	next    int
	filled  int
	win     *hist.Histogram
	soFar   ivCounts
	abort   string
	final   bool // the run is over: the last, partial interval is not judged
	quiet   bool // the last interval reports no progress (as before the timeline)
	planned time.Duration
}

// judged is one interval of --abort-on-fail's window.
type judged struct {
	from, to time.Time
	h        *hist.Histogram
	c        ivCounts
}

func (t *timeline) init(e *engine) {
	cfg := &e.cfg
	t.interval, t.measure = cfg.Interval, e.measure
	t.k = 1
	if cfg.Duration > 0 {
		t.planned = cfg.Warmup.D() + cfg.Duration.D()
		if n := int(math.Ceil(float64(t.planned) / float64(t.interval))); n > maxTimeline {
			t.k = (n + maxTimeline - 1) / maxTimeline
		}
		t.list = make([]results.Interval, 0, min(maxTimeline, int(t.planned/t.interval)/t.k+2))
	}
	if cfg.Warmup > 0 {
		t.wuSpare, t.wuHist = hist.New(), hist.New()
		for _, sh := range e.shards {
			sh.wuLatency = hist.New() // before the load begins: no worker reads it yet
		}
	}
	if cfg.Judge != nil {
		w := cfg.JudgeWindow
		if w <= 0 {
			w = DefaultJudgeWindow
		}
		n := max(1, int(math.Ceil(float64(w)/float64(t.interval)-1e-9)))
		t.judge, t.after = cfg.Judge, max(cfg.JudgeAfter, time.Duration(n)*t.interval)
		t.ring = make([]judged, n)
		for i := range t.ring {
			t.ring[i].h = hist.New()
		}
		t.win = hist.New()
	}
}

// add records an interval [from, to) with its latencies h and counts c.
func (t *timeline) add(from, to time.Time, h *hist.Histogram, c ivCounts, warm bool) {
	if t.k == 1 {
		t.push(t.record(from, to, h, c, warm))
		return
	}
	if t.accN > 0 && t.accWarm != warm {
		t.flush(from)
	}
	if t.accN == 0 {
		if t.acc == nil {
			t.acc = hist.New()
		}
		t.accFrom, t.accWarm = from, warm
	}
	t.acc.Merge(h)
	t.accC.add(c)
	t.accN++
	t.accTo = to
	if t.accN >= t.k {
		t.flush(to)
	}
}

// flush ends the record being gathered at to.
func (t *timeline) flush(to time.Time) {
	if t.accN == 0 {
		return
	}
	t.push(t.record(t.accFrom, to, t.acc, t.accC, t.accWarm))
	t.acc.Reset()
	t.accC, t.accN = ivCounts{}, 0
}

func (t *timeline) record(from, to time.Time, h *hist.Histogram, c ivCounts, warm bool) results.Interval {
	e := c.errors()
	iv := results.Interval{Start: results.Duration(from.Sub(t.measure)), Duration: results.Duration(to.Sub(from)), Warmup: warm,
		Requests: c.answered, Errors: e.Total(), Timeouts: e.Timeout, Status: e.Status}
	if d := to.Sub(from); d > 0 {
		iv.RPS = float64(c.answered) / d.Seconds()
	}
	if n := h.Count(); n > 0 {
		iv.P50, iv.P99 = results.Duration(h.Quantile(0.5)), results.Duration(h.Quantile(0.99))
		if n >= results.MinP999 {
			iv.P999 = results.Duration(h.Quantile(0.999))
		}
	}
	iv.Outage = iv.IsOutage()
	return iv
}

// push appends a record; a full timeline (a run bounded by -n only, or one
// that outlasted its plan) folds its records in pairs first.
func (t *timeline) push(iv results.Interval) {
	if len(t.list) >= maxTimeline {
		half := t.list[:0] // written behind where it reads
		for i := 0; i < len(t.list); {
			a := t.list[i]
			if i+1 < len(t.list) && t.list[i+1].Warmup == a.Warmup {
				a.Fold(t.list[i+1])
				i += 2
			} else {
				i++
			}
			half = append(half, a)
		}
		t.list = half
		t.k *= 2
	}
	t.list = append(t.list, iv)
}

// done is the timeline, once the run is over. A last interval shorter than
// a tenth of the interval is folded into the one before it.
func (t *timeline) done() []results.Interval {
	t.flush(t.accTo)
	if n := len(t.list); n >= 2 {
		last, prev := t.list[n-1], &t.list[n-2]
		if last.Duration.D() < t.interval/10 && last.Warmup == prev.Warmup {
			prev.Fold(last)
			t.list = t.list[:n-1]
		}
	}
	if len(t.list) == 0 {
		return nil
	}
	return t.list
}

// warmup cuts the warm-up's intervals, every Interval from the start.
func (r *reporter) warmup(now time.Time) {
	t := &r.tl
	if t.wuHist == nil {
		return
	}
	if t.wuFrom.IsZero() {
		t.wuFrom = r.e.start
	}
	if now.Sub(t.wuFrom) >= t.interval {
		r.warmCut(now)
	}
}

// warmupEnd cuts the warm-up's last interval at the measured window's
// start. A request sent in the warm-up and ended after it counts nowhere.
func (r *reporter) warmupEnd() {
	t := &r.tl
	if t.wuHist == nil {
		return
	}
	if t.wuFrom.IsZero() {
		t.wuFrom = r.e.start
	}
	if r.e.measure.After(t.wuFrom) {
		r.warmCut(r.e.measure)
	}
	t.flush(r.e.measure)
}

// warmupLast cuts the warm-up's partial interval of a run stopped during
// it.
func (r *reporter) warmupLast(finish time.Time) {
	t := &r.tl
	if r.measuring || t.wuHist == nil {
		return
	}
	if t.wuFrom.IsZero() {
		t.wuFrom = r.e.start
	}
	if end := minTime(finish, r.e.measure); end.After(t.wuFrom) {
		r.warmCut(end)
	}
}

func (r *reporter) warmCut(to time.Time) {
	t := &r.tl
	var c ivCounts
	for _, sh := range r.e.shards {
		h, n := sh.swapWarm(t.wuSpare)
		t.wuHist.Merge(h)
		h.Reset()
		t.wuSpare = h
		c.add(n)
	}
	t.add(t.wuFrom, to, t.wuHist, c, true)
	t.wuHist.Reset()
	t.wuFrom = to
}

// cut records the measured interval [r.ivFrom, now), whose latencies are
// in r.ivLat, and judges the run's last seconds (--abort-on-fail). total
// is the shards' counts so far, each read as its histograms were swapped.
func (r *reporter) cut(now time.Time, total ivCounts) {
	t := &r.tl
	c := total.sub(t.last)
	t.last = total
	t.add(r.ivFrom, now, r.ivLat, c, false)
	r.stageCut(r.ivFrom, now, r.ivLat, c)
	if t.judge == nil || t.final || t.abort != "" {
		return
	}
	slot := &t.ring[t.next]
	slot.from, slot.to, slot.c = r.ivFrom, now, c
	slot.h.Reset()
	slot.h.Merge(r.ivLat)
	t.next = (t.next + 1) % len(t.ring)
	t.filled = min(t.filled+1, len(t.ring))
	t.soFar.add(c)
	if t.filled < len(t.ring) || now.Sub(r.e.measure) < t.after {
		return
	}
	// The window: the ring's intervals, oldest first.
	var wc ivCounts
	t.win.Reset()
	from := now
	for _, s := range t.ring {
		wc.add(s.c)
		t.win.Merge(s.h)
		from = minTime(from, s.from)
	}
	w := Window{From: from.Sub(r.e.measure), To: now.Sub(r.e.measure),
		Recent: wc.summary(now.Sub(from)), SoFar: t.soFar.summary(now.Sub(r.e.measure))}
	w.Recent.Latency = results.Reduce(t.win)
	t.abort = t.judge(w)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
