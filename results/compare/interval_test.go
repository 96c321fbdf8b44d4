package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"loadgen/results"
)

// The Mann–Whitney statistic's distribution, as the tables give it.
func TestMannWhitney(t *testing.T) {
	got := mannWhitney(3, 3)
	want := []float64{1, 1, 2, 3, 3, 3, 3, 2, 1, 1} // C(6,3) = 20 orderings
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("U(3,3) = %v, want %v", got, want)
		}
	}
	binom := func(n, k int) float64 {
		r := 1.0
		for i := 1; i <= k; i++ {
			r = r * float64(n-k+i) / float64(i)
		}
		return r
	}
	for _, mn := range [][2]int{{1, 1}, {2, 3}, {3, 2}, {4, 7}, {10, 10}, {20, 30}} {
		var sum float64
		c := mannWhitney(mn[0], mn[1])
		for i, x := range c {
			sum += x
			if x != c[len(c)-1-i] {
				t.Errorf("U(%d,%d) is not symmetric: %v", mn[0], mn[1], c)
				break
			}
		}
		if want := binom(mn[0]+mn[1], mn[0]); math.Abs(sum-want) > 1e-6*want {
			t.Errorf("U(%d,%d) counts %g orderings, want %g", mn[0], mn[1], sum, want)
		}
	}
}

// The order statistic and confidence of the interval per repeats: the
// widest (min..max of the pairwise ratios) until a narrower one keeps
// 95%; five a side give k = 3, as the Mann–Whitney tables' U = 2.
func TestOrderFor(t *testing.T) {
	for _, tc := range []struct {
		m, n  int
		k     int
		level float64
	}{
		{1, 1, 1, 0},
		{1, 3, 1, 0.5},
		{2, 2, 1, 1 - 2.0/6},
		{2, 3, 1, 0.8},
		{3, 3, 1, 0.9},
		{3, 4, 1, 1 - 2.0/35},
		{4, 4, 1, 1 - 2.0/70},
		{5, 5, 3, 1 - 8.0/252},
		{10, 10, 24, 0},
	} {
		k, level := orderFor(tc.m, tc.n)
		if k != tc.k || (tc.level > 0 && math.Abs(level-tc.level) > 1e-12) || level < 0 || level > 1 {
			t.Errorf("orderFor(%d, %d) = %d, %.4f; want %d, %.4f", tc.m, tc.n, k, level, tc.k, tc.level)
		}
	}
	if k, l := orderFor(300, 300); k < 40000 || l != TargetLevel {
		t.Errorf("orderFor(300, 300) = %d, %g", k, l)
	}
}

func TestRatioInterval(t *testing.T) {
	iv := RatioInterval([]float64{10, 11, 12}, []float64{13, 14, 15})
	if iv.Lo != 13.0/12 || iv.Hi != 1.5 || math.Abs(iv.Level-0.9) > 1e-12 || !iv.OK() {
		t.Errorf("%+v, want 13/12 .. 15/10 at 90%%", iv)
	}
	if iv := RatioInterval([]float64{10}, []float64{20}); iv.OK() {
		t.Errorf("one repeat a side: %+v", iv)
	}
	if iv := RatioInterval([]float64{10, 11}, []float64{13, 14, 15}); !iv.OK() || math.Abs(iv.Level-0.8) > 1e-12 {
		t.Errorf("two and three repeats: %+v", iv)
	}
	// A zero: B−A over A's median.
	if iv := RatioInterval([]float64{0, 10, 20}, []float64{10, 10, 10}); iv.Lo != 0 || iv.Hi != 2 {
		t.Errorf("with a zero: %+v, want 0..2", iv)
	}
	if iv := DiffInterval([]float64{0.01, 0.01, 0.02}, []float64{0.03, 0.04, 0.05}); math.Abs(iv.Lo-0.01) > 1e-12 || math.Abs(iv.Hi-0.04) > 1e-12 {
		t.Errorf("differences: %+v", iv)
	}
}

// The interval covers the true ratio at least as often as it says, on
// noise far from normal (log-normal with heavy spikes, as a loaded
// machine's p99s): the coverage is the ranks', whatever the noise.
func TestRatioIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(scale float64) float64 {
		x := scale * math.Exp(0.3*rng.NormFloat64())
		if rng.IntN(10) == 0 {
			x *= 3 // a spike
		}
		return x
	}
	for _, mn := range [][2]int{{3, 3}, {2, 3}, {5, 5}, {4, 6}} {
		const trials = 4000
		const truth = 1.3
		covered, level := 0, 0.0
		for range trials {
			var a, b []float64
			for range mn[0] {
				a = append(a, noisy(10))
			}
			for range mn[1] {
				b = append(b, noisy(10*truth))
			}
			iv := RatioInterval(a, b)
			level = iv.Level
			if iv.Spans(truth) {
				covered++
			}
		}
		if got := float64(covered) / trials; got < level-0.02 {
			t.Errorf("%d and %d repeats: the %.1f%% interval covered the truth %.1f%% of the time", mn[0], mn[1], 100*level, 100*got)
		}
	}
}

// repeats is runs of the given p99s (ms) and rps.
func repeats(rps []float64, p99 []float64) []*results.Run {
	var out []*results.Run
	for i := range p99 {
		out = append(out, runOf(rps[i], p99[i]))
	}
	return out
}

// With repeats, a figure is judged by its interval: a regression only
// when the whole interval is past the limit, within noise when it spans
// it, worse or better when wholly past the noise band, and holds.
func TestIntervalVerdicts(t *testing.T) {
	opt := Options{MaxRegression: 0.10}
	three := []float64{1000, 1000, 1000}
	for _, tc := range []struct {
		name   string
		a, b   []float64
		higher bool
		want   Verdict
	}{
		{"30% slower, tight", []float64{20, 20.2, 20.4}, []float64{26, 26.2, 26.5}, false, Regression},
		{"30% slower by the medians, repeats overlapping", []float64{20, 20.5, 30}, []float64{28, 29, 30}, false, WithinNoise},
		{"a spike in one repeat of B", []float64{20, 20.1, 20.2}, []float64{20.1, 20.3, 40}, false, WithinNoise},
		{"8% slower, tight", []float64{20, 20.1, 20.2}, []float64{21.6, 21.7, 21.8}, false, Worse},
		{"3% slower, tight", []float64{20, 20.1, 20.2}, []float64{20.6, 20.7, 20.8}, false, Holds},
		{"the same", []float64{20, 20.5, 21}, []float64{20, 20.5, 21}, false, Holds},
		{"the same, spread 10%: it could be 10% worse", []float64{20, 21, 22}, []float64{20, 21, 22}, false, WithinNoise},
		{"20% faster", []float64{20, 20.1, 20.2}, []float64{16, 16.1, 16.2}, false, Better},
		{"rps down 30%", []float64{1000, 1010, 1020}, []float64{700, 705, 710}, true, Regression},
		{"rps down 20%, one repeat at A's level", []float64{1000, 1010, 1020}, []float64{800, 805, 1000}, true, WithinNoise},
		{"rps up 20%", []float64{1000, 1010, 1020}, []float64{1200, 1205, 1210}, true, Better},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := judgeValues("p99", tc.higher, tc.a, tc.b, opt)
			if r.Verdict != tc.want || r.Point || !r.Interval.OK() {
				t.Errorf("%s (point %v, interval %+v), want %s", r.Verdict, r.Point, r.Interval, tc.want)
			}
		})
	}
	// Through Steps: the same figures, every metric.
	var a, b []*results.Step
	for i := range 3 {
		sa, sb := step("nginx", "c4t4", 100, i+1, 0, 0), step("nginx", "c4t4", 100, i+1, 0, 0)
		sa.Run, sb.Run = repeats(three, []float64{20, 20.5, 30})[i], repeats(three, []float64{28, 29, 30})[i]
		a, b = append(a, sa), append(b, sb)
	}
	c := Steps(a, b, opt)
	if v := verdicts(c); v["p99"] != WithinNoise || v["rps"] != Holds || len(c.Regressions()) != 0 {
		t.Errorf("%v", v)
	}
}

// A step whose machine (M) or generator (G) was saturated on either side
// is contended: its figures are shown, not judged, and never fail;
// JudgeContended judges them.
func TestContended(t *testing.T) {
	var a, b []*results.Step
	for i, rep := range []int{1, 2, 3} {
		sa := step("nginx", "c4t4", 100, rep, 3000, []float64{20, 20.2, 20.4}[i])
		sb := step("nginx", "c4t4", 100, rep, 2100, []float64{26, 26.2, 26.5}[i])
		if rep == 2 {
			sb.Run.Machine = &results.MachineCost{CPUs: 2, BusyCores: 1.98, Utilization: 0.99, Saturated: true}
			sa.Run.Generator.Saturated = true
		}
		a, b = append(a, sa), append(b, sb)
	}
	c := Steps(a, b, Options{MaxRegression: 0.10})
	for _, r := range c.Rows {
		if r.Verdict != Contended || r.Contended != "G in A, M in B" || r.Label() != "contended (G in A, M in B)" {
			t.Errorf("%+v", r)
		}
	}
	if len(c.Regressions()) != 0 || !c.Matched() {
		t.Errorf("regressions %v, matched %v", c.Regressions(), c.Matched())
	}
	var out strings.Builder
	WriteText(&out, c)
	for _, want := range []string{"no regression beyond 10% (6 contended (not judged))", "--judge-contended judges them", "1.27..1.32  contended (G in A, M in B)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if cs := RowCase(c.Rows[0]); cs.Skipped == "" || cs.Failure != "" {
		t.Errorf("junit case %+v", cs)
	}

	c = Steps(a, b, Options{MaxRegression: 0.10, JudgeContended: true})
	if v := verdicts(c); v["p99"] != Regression || v["rps"] != Regression || len(c.Regressions()) != 5 {
		t.Errorf("judged: %v", v)
	}
	out.Reset()
	WriteText(&out, c)
	if !strings.Contains(out.String(), "judged though contended (--judge-contended)") {
		t.Errorf("text:\n%s", out.String())
	}

	// A run that failed in B is a regression, contended or not.
	dead := step("nginx", "c4t4", 100, 1, -1, 0)
	c = Steps(a[:1], []*results.Step{dead}, Options{})
	if len(c.Regressions()) != 1 {
		t.Errorf("%+v", c.Rows)
	}
}

// The share of failed requests, with repeats: by the interval of B−A
// against the 0.1 point tolerance.
func TestErrorsInterval(t *testing.T) {
	runs := func(shares ...float64) []*results.Run {
		var out []*results.Run
		for _, f := range shares {
			out = append(out, failing(10000, 20, f))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		a, b []*results.Run
		want Verdict
	}{
		{"1% more, every repeat", runs(0, 0, 0), runs(0.01, 0.011, 0.012), Regression},
		{"1% more in one repeat", runs(0, 0, 0), runs(0, 0, 0.01), WithinNoise},
		{"none either side", runs(0, 0, 0), runs(0, 0, 0), Holds},
		{"1% fewer", runs(0.01, 0.011, 0.012), runs(0, 0, 0), Better},
	} {
		if r := judgeErrors(tc.a, tc.b, Options{}); r.Verdict != tc.want || r.Point {
			t.Errorf("%s: %s, want %s (%+v)", tc.name, r.Verdict, tc.want, r.Interval)
		}
	}
}
