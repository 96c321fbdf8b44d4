package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"loadgen/results"
)

// Defaults of Options.
const (
	DefaultNoise         = 0.05 // ±5%: what one run differs from the next on a quiet machine
	DefaultMaxRegression = 0.10
	DefaultErrorRise     = 0.001 // 0.1 percentage point: one request in a thousand
)

// Options tune what counts as a change.
type Options struct {
	// Noise is the relative band within which a difference is noise. A
	// figure with an interval (enough repeats: MinLevel) is worse or
	// better only when its whole interval lies beyond the band; one
	// without (a point verdict, one repeat a side) differs from A only
	// when B's min..max clears A's min..max widened by it. Zero means
	// DefaultNoise.
	Noise float64
	// MaxRegression is how much worse (a fraction: 0.10 is 10%) a real
	// change may be before it is a regression: a figure regressed when its
	// whole interval lies past it (and past the noise band). Zero: any
	// real change for the worse is one.
	MaxRegression float64
	// ErrorRise is how far (a fraction of the requests tried: 0.001 is 0.1
	// percentage point) B's share of failed requests may exceed A's before
	// it is a regression: more failures are never merely "worse". Zero
	// means DefaultErrorRise.
	ErrorRise float64
	// JudgeContended judges the figures of steps that measured contention
	// (the machine's CPUs or the generator's saturated on a side) as the
	// others, without the margin contention could explain
	// (contention.go): a change past MaxRegression is a regression.
	JudgeContended bool
	// AllowContended lets a check pass whose only doubt is contention:
	// figures worse than MaxRegression but within what contention can
	// explain (Contended) give exit status 0 instead of 98.
	AllowContended bool
}

func (o Options) errorRise() float64 {
	if o.ErrorRise <= 0 {
		return DefaultErrorRise
	}
	return o.ErrorRise
}

func (o Options) noise() float64 {
	if o.Noise <= 0 {
		return DefaultNoise
	}
	return o.Noise
}

// Verdict is what became of one figure from A to B.
type Verdict string

const (
	// Regression means worse beyond MaxRegression: the whole interval past it
	// (a point verdict: the ratio past it, B's repeats clear of A's).
	Regression Verdict = "REGRESSION"
	// WithinNoise means the interval spans the regression's bound: the
	// repeats cannot tell whether B regressed.
	WithinNoise Verdict = "within noise"
	// Worse means the whole interval is worse than A beyond the noise band,
	// and short of MaxRegression.
	Worse Verdict = "worse"
	// Holds means the interval is short of MaxRegression and not wholly past
	// the noise band on either side.
	Holds Verdict = "holds"
	// Better means the whole interval is better than A beyond the noise band.
	Better Verdict = "better"
	// Same is a point verdict: B within the noise band of A.
	Same Verdict = "same"
	// Contended means not decidable: worse than MaxRegression, but within what
	// contention for CPU on B's side (M or G) can explain (contention.go).
	// A change past that margin is a Regression.
	Contended Verdict = "contended"
	// Missing means no figures on one side.
	Missing Verdict = "missing"
)

// Stat is a figure over the repeats of a step.
type Stat struct {
	N                int
	Median, Min, Max float64
}

func statOf(xs []float64) Stat {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	st := Stat{N: len(s)}
	if len(s) == 0 {
		return st
	}
	st.Min, st.Max = s[0], s[len(s)-1]
	if n := len(s); n%2 == 1 {
		st.Median = s[n/2]
	} else {
		st.Median = (s[n/2-1] + s[n/2]) / 2
	}
	return st
}

// Row is one figure of one step (or of a run), A against B.
type Row struct {
	Step string // "nginx c4t4 1KiB", or the run's target
	// Metric is rps (requests answered without error per second), errors
	// (the share of requests tried that failed), p50, p90, p99, p99.9,
	// cpu/1k.NAME and MiB.NAME (the watched processes NAME of a sweep
	// step), or "run" when a side has no run or no request succeeded in it.
	Metric string
	A, B   Stat    // requests/s, a share (0..1), latency in nanoseconds, cores per 1000 requests/s, or MiB
	Ratio  float64 // B/A of the medians
	// Interval is B/A's over the repeats (for errors, B−A's, a share);
	// Level 0 when the repeats are too few for one.
	Interval Interval
	// Point is set when the verdict compares medians and ranges against the
	// noise band, without an interval (too few repeats: Interval.OK is
	// false): its noise cannot be told.
	Point bool
	// Contended says on which side the figures measure contention ("M in
	// B": the machine's CPUs were saturated; G: the generator's), or "".
	Contended string
	// Margin is what contention on B's side could explain of a change
	// worse than MaxRegression, when it was asked: "×6.7 + 1ms: 85% of
	// the machine's CPUs taken by other work beyond A's".
	Margin  string
	Verdict Verdict
	Note    string // why a side has no figures: "failed in B: cannot connect"
}

// Label is the verdict as printed: "REGRESSION", "same (point)",
// "contended (M in B)".
func (r Row) Label() string {
	switch {
	case r.Verdict == Contended:
		return fmt.Sprintf("%s (%s)", r.Verdict, r.Contended)
	case r.Verdict == Regression && r.Margin != "":
		return fmt.Sprintf("%s (%s, past contention)", r.Verdict, r.Contended)
	case r.Point && r.Note == "":
		return string(r.Verdict) + " (point)"
	}
	return string(r.Verdict)
}

// Message describes the row in one line.
func (r Row) Message() string {
	if r.Note != "" {
		return fmt.Sprintf("%s %s: %s (%s)", r.Step, r.Metric, r.Note, r.Label())
	}
	iv := ""
	if s := r.intervalText(); s != "" {
		iv = " " + s
	}
	msg := fmt.Sprintf("%s %s: %s → %s (×%s%s, %s)", r.Step, r.Metric,
		r.format(r.A.Median), r.format(r.B.Median), ratio(r.Ratio), iv, r.Label())
	switch {
	case r.Verdict == Contended:
		msg += "; within what contention on B's side can explain (" + r.Margin + ")"
	case r.Margin != "":
		msg += "; past what contention on B's side can explain (" + r.Margin + ")"
	}
	return msg
}

// intervalText is the interval, with its confidence: "[1.21..1.35] 90%",
// for errors in percentage points: "[+0.1..+0.3 pt] 90%"; "" without one.
func (r Row) intervalText() string {
	iv := r.Interval
	if !iv.OK() || r.Note != "" {
		return ""
	}
	level := sig(100*iv.Level) + "%"
	if r.Metric == "errors" {
		return fmt.Sprintf("[%s..%s pt] %s", signed(100*iv.Lo), signed(100*iv.Hi), level)
	}
	return fmt.Sprintf("[%s..%s] %s", ratio(iv.Lo), ratio(iv.Hi), level)
}

func signed(v float64) string {
	if v > 0 {
		return "+" + sig(v)
	}
	return sig(v)
}

func (r Row) format(v float64) string {
	switch {
	case r.Metric == "rps":
		return number(v) + "/s"
	case r.Metric == "errors":
		return percent(100 * v)
	case strings.HasPrefix(r.Metric, "cpu/1k."):
		return number(v) + " cores"
	case strings.HasPrefix(r.Metric, "MiB."):
		return byteSize(v * (1 << 20))
	}
	return duration(v)
}

func ratio(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", v)
}

// medianRatio is B/A of the medians: 1 when both are 0, ∞ when only A's is.
func medianRatio(a, b Stat) float64 {
	switch {
	case a.Median != 0:
		return b.Median / a.Median
	case b.Median == 0:
		return 1
	}
	return math.Inf(1)
}

// judgeValues compares the repeats xa and xb of the figure name, higher
// better or not: by the interval of B/A when the repeats give one, else
// by the point verdict.
func judgeValues(name string, higher bool, xa, xb []float64, opt Options) Row {
	row := Row{Metric: name, A: statOf(xa), B: statOf(xb)}
	row.Ratio = medianRatio(row.A, row.B)
	row.Interval = RatioInterval(xa, xb)
	if !row.Interval.OK() {
		row.Point = true
		row.Verdict = pointVerdict(higher, row, opt)
		return row
	}
	iv, n, t := row.Interval, opt.noise(), opt.MaxRegression
	var regressed, spans, worse, better bool
	if higher { // rps down 10%: B/A below 0.9
		limit := min(1-t, 1-n) // a change within the noise band is never a regression
		regressed, spans = iv.Hi < limit, iv.Spans(limit)
		worse, better = iv.Hi < 1-n, iv.Lo > 1+n
	} else {
		limit := max(1+t, 1+n)
		regressed, spans = iv.Lo > limit, iv.Spans(limit)
		worse, better = iv.Lo > 1+n, iv.Hi < 1-n
	}
	switch {
	case regressed:
		row.Verdict = Regression
	case spans:
		row.Verdict = WithinNoise
	case worse:
		row.Verdict = Worse
	case better:
		row.Verdict = Better
	default:
		row.Verdict = Holds
	}
	return row
}

// pointVerdict is the verdict of a figure without an interval: B's
// min..max against A's widened by the noise band, and the medians' ratio
// against MaxRegression.
func pointVerdict(higher bool, row Row, opt Options) Verdict {
	n := opt.noise()
	up := row.B.Min > row.A.Max*(1+n)
	down := row.B.Max < row.A.Min*(1-n)
	switch {
	case !up && !down:
		return Same
	case up == higher:
		return Better
	case higher && row.Ratio < 1-opt.MaxRegression, !higher && row.Ratio > 1+opt.MaxRegression:
		return Regression
	}
	return Worse
}

// judgeErrors compares the shares of failed requests over the repeats:
// a rise of B over A beyond opt's ErrorRise is a regression, by the
// interval of B−A when the repeats give one (else B's range beyond A's),
// and a fall as far is better.
func judgeErrors(a, b []*results.Run, opt Options) Row {
	var xa, xb []float64
	for _, r := range a {
		xa = append(xa, r.Summary.ErrorShare())
	}
	for _, r := range b {
		xb = append(xb, r.Summary.ErrorShare())
	}
	row := Row{Metric: "errors", A: statOf(xa), B: statOf(xb)}
	row.Ratio = medianRatio(row.A, row.B)
	row.Interval = DiffInterval(xa, xb)
	rise := opt.errorRise()
	if !row.Interval.OK() {
		row.Point = true
		switch {
		case row.B.Min > row.A.Max+rise:
			row.Verdict = Regression
		case row.B.Max < row.A.Min-rise:
			row.Verdict = Better
		default:
			row.Verdict = Same
		}
		return row
	}
	switch iv := row.Interval; {
	case iv.Lo > rise:
		row.Verdict = Regression
	case iv.Spans(rise):
		row.Verdict = WithinNoise
	case iv.Hi < -rise:
		row.Verdict = Better
	default:
		row.Verdict = Holds
	}
	return row
}
