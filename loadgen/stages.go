package loadgen

import (
	"time"

	"loadgen/loadgen/pace"
	"loadgen/results"
	"loadgen/results/hist"
)

// stageAcc gathers the measured intervals of one stage of a staged
// schedule: their latencies, counts and span.
type stageAcc struct {
	h        *hist.Histogram
	c        ivCounts
	from, to time.Time
	n        int
}

// stagesOf is the staged schedule under p's arrival process, or nil. (A
// closed loop's stages are its connection schedule's: Config.ConnSchedule.)
func stagesOf(p pace.Pacer) *pace.Stages {
	s, _ := pace.Schedule(p).(*pace.Stages)
	return s
}

// stageCut adds the measured interval [from, to), its latencies h and
// counts c, to the stage its middle falls in: a stage's figures are whole
// intervals, as the timeline's.
func (r *reporter) stageCut(from, to time.Time, h *hist.Histogram, c ivCounts) {
	if r.stages == nil {
		return
	}
	mid := from.Add(to.Sub(from) / 2).Sub(r.e.start)
	a := &r.stAcc[r.stages.StageAt(mid)]
	if a.h == nil {
		a.h = hist.New()
	}
	if a.n == 0 {
		a.from = from
	}
	a.h.Merge(h)
	a.c.add(c)
	a.to = to
	a.n++
}

// stageSummaries are the measured stages' figures, in order; a stage with
// no measured interval (in the warm-up, or after the run stopped) is left
// out.
func (r *reporter) stageSummaries() []results.Stage {
	if r.stages == nil {
		return nil
	}
	var out []results.Stage
	list := r.stages.List()
	for k := range r.stAcc {
		a := &r.stAcc[k]
		d := a.to.Sub(a.from)
		if a.n == 0 || d <= 0 {
			continue
		}
		e := a.c.errors()
		st := results.Stage{Stage: list[k].String(), Start: results.Duration(a.from.Sub(r.e.measure)), Duration: results.Duration(d),
			Requests: a.c.answered, Errors: e.Total(), Latency: results.Reduce(a.h)}
		if r.e.pacer != nil {
			// The schedule's own count, not an arrival process's draw.
			from, to := a.from.Sub(r.e.start), a.to.Sub(r.e.start)
			st.Asked = float64(expected(r.stages, from, to)) / d.Seconds()
		}
		st.Achieved = float64(a.c.answered+e.Total()-e.Status) / d.Seconds()
		out = append(out, st)
	}
	return out
}
