package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"loadgen/results"
)

// A busy machine's margin: B's contention beyond A's (CPU lost to other
// work, L; its generator's slowdown, S) bounds how much worse B may look,
// F = max(1/(1 − L), S, 1), plus the send lag d for a latency. Past the
// margin is a regression; within it but past --max-regression, Contended.
// The rule in full: docs/compare.md, "A busy machine".

// maxCPULost caps L: a run left 5% of the CPU it had can be 20 times
// slower; past that, nothing it measured would mean anything.
const maxCPULost = 0.95

// contention is what the runs of a step say of contention for CPU.
type contention struct {
	why     string  // "M in B", "G in A, M in B"; "" when neither side was saturated
	inB     bool    // B's side was saturated: its contention may explain B worse
	cpuLost float64 // L
	genSlow float64 // S, 0 unless B's generator was saturated
	late    float64 // the largest share of B's sends that were late (open loop)
	maxLag  time.Duration
}

// factor is F.
func (c contention) factor() float64 {
	return max(1/(1-c.cpuLost), c.genSlow, 1)
}

// lag is d for a percentile q (0..1): the max send lag when at least 1 − q
// of the sends were late, else results.LateAfter.
func (c contention) lag(q float64) time.Duration {
	if c.maxLag > results.LateAfter && c.late >= 1-q-1e-12 {
		return c.maxLag
	}
	return results.LateAfter
}

// describe is the margin in words for a figure: "×6.7 + 1ms: the machine's
// CPUs 85% taken by other work".
func (c contention) describe(metric string) string {
	f := "×" + sig(c.factor())
	var why []string
	if q, ok := quantile(metric); ok {
		d := c.lag(q)
		f += " + " + duration(float64(d))
		if d > results.LateAfter {
			why = append(why, fmt.Sprintf("sends up to %s late (%s of them)", duration(float64(d)), FormatPercent(c.late)))
		}
	}
	if c.cpuLost >= 0.01 {
		why = append(why, fmt.Sprintf("%s of the machine's CPUs taken by other work beyond A's", FormatPercent(c.cpuLost)))
	}
	if c.genSlow > 1.01 {
		why = append(why, fmt.Sprintf("the generator saturated, %s its CPU per request in A", "×"+sig(c.genSlow)))
	}
	if len(why) == 0 {
		return f
	}
	return f + ": " + strings.Join(why, ", ")
}

// contentionOf reads contention from the runs of a step, A's and B's.
func contentionOf(a, b []*results.Run) contention {
	c := contention{why: contentionFlags(a, b)}
	for _, r := range b {
		c.inB = c.inB || r.Generator.Saturated || (r.Machine != nil && r.Machine.Saturated)
	}
	if !c.inB {
		return c
	}
	othersA := math.Inf(1)
	for _, r := range a {
		o, _, ok := others(r)
		if !ok {
			o = 0 // unmeasured: the widest margin
		}
		othersA = min(othersA, o)
	}
	if math.IsInf(othersA, 1) {
		othersA = 0
	}
	othersB, cpus := 0.0, 0
	perReqA, perReqB := math.Inf(1), 0.0
	for _, r := range a {
		if v, ok := cpuPerRequest(r); ok {
			perReqA = min(perReqA, v)
		}
	}
	for _, r := range b {
		if o, n, ok := others(r); ok && r.Machine.Saturated {
			othersB = max(othersB, o)
			cpus = max(cpus, n)
		}
		if v, ok := cpuPerRequest(r); ok && r.Generator.Saturated {
			perReqB = max(perReqB, v)
		}
		if p := r.Summary.Pacing; p != nil && !shortOfConnections(r) {
			if p.Sent > 0 {
				c.late = max(c.late, float64(p.Late)/float64(p.Sent))
			}
			c.maxLag = max(c.maxLag, p.MaxLag.D())
		}
	}
	if cpus > 0 {
		c.cpuLost = min(max((othersB-othersA)/float64(cpus), 0), maxCPULost)
	}
	if perReqB > 0 && !math.IsInf(perReqA, 1) && perReqA > 0 {
		c.genSlow = perReqB / perReqA
	}
	return c
}

// shortOfConnections tells whether a paced run's sends may have waited
// for a free connection rather than for the CPU: by Little's law the
// requests in flight are the asked rate times the time each took from its
// send (the uncorrected mean); at half its connections' capacity or more
// (connections × streams) sends queue for one. A target that got slower
// makes its own sends late so: that lag is not contention's to explain.
func shortOfConnections(r *results.Run) bool {
	p, u := r.Summary.Pacing, r.Summary.Uncorrected
	if p == nil || u == nil {
		return true // no send times to tell: the lag is not counted
	}
	slots := float64(max(r.Config.Connections, 1) * max(r.Config.Streams, 1))
	inFlight := p.Asked * u.Mean.D().Seconds()
	return inFlight >= slots/2
}

// others is the machine's busy cores other than the generator's over a
// run's window, and its CPUs; ok is false without the machine's figures.
func others(r *results.Run) (float64, int, bool) {
	m := r.Machine
	if m == nil || m.CPUs <= 0 {
		return 0, 0, false
	}
	gen := 0.0
	if d := r.Summary.Duration.D().Seconds(); d > 0 {
		gen = r.Generator.CPUSeconds / d
	}
	return max(m.BusyCores-gen, 0), m.CPUs, true
}

// cpuPerRequest is the generator's CPU time per request tried.
func cpuPerRequest(r *results.Run) (float64, bool) {
	n := r.Summary.Attempts()
	if n <= 0 || r.Generator.CPUSeconds <= 0 {
		return 0, false
	}
	return r.Generator.CPUSeconds / float64(n), true
}

// quantile is the percentile a latency metric names, as a fraction: p50
// 0.5, p99.9 0.999.
func quantile(metric string) (float64, bool) {
	s, ok := strings.CutPrefix(metric, "p")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v >= 100 {
		return 0, false
	}
	return v / 100, true
}

// contentionFlags says on which side the runs measured contention for
// CPU: "M in B", "G in A, GM in B" (G: the generator saturated, M: the
// machine's CPUs), or "".
func contentionFlags(a, b []*results.Run) string {
	flags := func(runs []*results.Run) string {
		g, m := false, false
		for _, r := range runs {
			g = g || r.Generator.Saturated
			m = m || (r.Machine != nil && r.Machine.Saturated)
		}
		s := ""
		if g {
			s += "G"
		}
		if m {
			s += "M"
		}
		return s
	}
	var parts []string
	if f := flags(a); f != "" {
		parts = append(parts, f+" in A")
	}
	if f := flags(b); f != "" {
		parts = append(parts, f+" in B")
	}
	return strings.Join(parts, ", ")
}

// contend judges the rows of a step that measured contention (c.why) by
// its margin: a regression within what B's contention can explain becomes
// Contended (not decidable); one past it stays a regression. Rows without
// figures (a failure) are left as they are. With opt.JudgeContended the
// margin is not applied: contended figures are judged as the others.
func contend(rows []Row, c contention, a, b []*results.Run, opt Options) {
	if c.why == "" {
		return
	}
	for i := range rows {
		r := &rows[i]
		if r.Note != "" {
			continue // no figures: a failure is one, contended or not
		}
		r.Contended = c.why
		if opt.JudgeContended || !c.inB || r.Verdict != Regression {
			continue
		}
		explained, margin := c.explains(*r, a, b, opt)
		r.Margin = margin
		if explained {
			r.Verdict = Contended
		}
	}
}

// explains tells whether contention can explain row's change beyond
// MaxRegression, and the margin it was held to. Figures are taken at
// their best for B: the end of the interval nearest A, or, without one,
// B's best repeat against A's worst.
func (c contention) explains(r Row, a, b []*results.Run, opt Options) (bool, string) {
	f, t := c.factor(), opt.MaxRegression
	switch {
	case r.Metric == "rps":
		limit := (1 / f) * (1 - t)
		if r.Interval.OK() && !r.Point {
			return r.Interval.Hi >= limit, c.describe(r.Metric)
		}
		return r.B.Max >= r.A.Min*limit, c.describe(r.Metric)
	case r.Metric == "errors":
		// Timeouts are contention's to explain; the other failures not.
		return !errorsPastTimeouts(a, b, opt), "timeouts only"
	case strings.HasPrefix(r.Metric, "MiB."):
		return false, "memory is not contention's"
	}
	d := 0.0
	if q, ok := quantile(r.Metric); ok {
		d = float64(c.lag(q))
	}
	if r.Interval.OK() && !r.Point {
		return r.Interval.Lo*r.A.Median <= (f*r.A.Median+d)*(1+t), c.describe(r.Metric)
	}
	return r.B.Min <= (f*r.A.Max+d)*(1+t), c.describe(r.Metric)
}

// errorsPastTimeouts tells whether B's failures other than timeouts rose
// past A's failures by more than the error rise allowed: a regression a
// busy machine cannot explain.
func errorsPastTimeouts(a, b []*results.Run, opt Options) bool {
	var xa, xb []float64
	for _, r := range a {
		xa = append(xa, r.Summary.ErrorShare())
	}
	for _, r := range b {
		s := r.Summary
		n := s.Attempts()
		if n <= 0 {
			xb = append(xb, 0)
			continue
		}
		xb = append(xb, float64(s.Errors.Total()-s.Errors.Timeout)/float64(n))
	}
	rise := opt.errorRise()
	if iv := DiffInterval(xa, xb); iv.OK() {
		return iv.Lo > rise
	}
	return statOf(xb).Min > statOf(xa).Max+rise
}

// Contention is what two sets of runs measured of contention for CPU, for
// a judge that orders two figures instead of comparing B with A (study's
// orderings): either side may be the one a busy machine made worse.
type Contention struct {
	// Flags says which side was saturated: "M in A, G in B"; "" when
	// neither was (then the factors are 1).
	Flags string
	// OnA and OnB are F for each side's figures: the most that side's
	// contention beyond the other's can stretch them (a latency, a CPU
	// per request: × F; a rate: / F).
	OnA, OnB float64
	// Why is the larger in words: "×1.8: 44% of the machine's CPUs taken
	// by other work beyond the other side's".
	Why string
}

// Factor is the larger of OnA and OnB.
func (c Contention) Factor() float64 { return max(c.OnA, c.OnB, 1) }

// ContentionBetween is the contention of runs a and b, named nameA and
// nameB, taken both ways: a's beyond b's, b's beyond a's; the send lag is
// left out (a mean or a median of closed-loop runs).
func ContentionBetween(nameA string, a []*results.Run, nameB string, b []*results.Run) Contention {
	c := Contention{OnA: 1, OnB: 1, Why: "×1"}
	flags := contentionFlags(a, b)
	if flags == "" {
		return c
	}
	var named []string
	for _, f := range strings.Split(flags, ", ") {
		f = strings.Replace(f, " in A", " in "+nameA, 1)
		named = append(named, strings.Replace(f, " in B", " in "+nameB, 1))
	}
	c.Flags = strings.Join(named, ", ")
	onA, onB := contentionOf(b, a), contentionOf(a, b)
	c.OnA, c.OnB = onA.factor(), onB.factor()
	why := onB
	if c.OnA > c.OnB {
		why = onA
	}
	c.Why = strings.ReplaceAll(why.describe(""), "beyond A's", "beyond the other side's")
	return c
}
