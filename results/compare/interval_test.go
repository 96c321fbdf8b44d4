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

// busy gives a run the machine it ran on: busy cores of 2, the generator
// using 0.1 of them over the run's 10 s.
func busy(r *results.Run, cores float64) *results.Run {
	r.Generator.CPUSeconds = 0.1 * r.Summary.Duration.D().Seconds()
	r.Machine = &results.MachineCost{CPUs: 2, BusyCores: cores, Utilization: cores / 2, Saturated: cores/2 >= results.SaturatedAbove}
	return r
}

// A step whose machine (M) or generator (G) was saturated is still
// judged, against what contention on B's side can explain: here other
// work took 1.88 of B's 2 CPUs against A's 0.2 (L 0.84, F 6.25). A change
// past that margin is a regression whatever the options; one within it,
// past the regression limit, is not decidable (Contended: exit 98 unless
// AllowContended); JudgeContended judges it without the margin.
func TestContended(t *testing.T) {
	steps := func(p99B float64, rpsB float64, busyA, busyB float64) (a, b []*results.Step) {
		for i, rep := range []int{1, 2, 3} {
			sa := step("nginx", "c4t4", 100, rep, 3000, []float64{20, 20.2, 20.4}[i])
			sb := step("nginx", "c4t4", 100, rep, rpsB, p99B*[]float64{1, 1.01, 1.02}[i])
			busy(sa.Run, busyA)
			busy(sb.Run, busyB)
			a, b = append(a, sa), append(b, sb)
		}
		return a, b
	}
	opt := Options{MaxRegression: 0.10}

	// ×1.3 slower, 30% fewer requests/s: within ×6.25, not decidable.
	a, b := steps(26, 2100, 0.3, 1.98)
	c := Steps(a, b, opt)
	if v := verdicts(c); v["p99"] != Contended || v["rps"] != Contended || v["errors"] != Holds {
		t.Errorf("within the margin: %v", v)
	}
	if r := c.Rows[0]; r.Contended != "M in B" || !strings.HasPrefix(r.Margin, "×6.25: 84% of the machine's CPUs taken by other work") {
		t.Errorf("row %+v", r)
	}
	if len(c.Regressions()) != 0 || len(c.Undecided()) != 6 || c.Exit() != Undecided {
		t.Errorf("regressions %v, undecided %d, exit %v", c.Regressions(), len(c.Undecided()), c.Exit())
	}
	var out strings.Builder
	WriteText(&out, c)
	for _, want := range []string{"no regression beyond 10% (1 holds, 6 contended (not decidable))",
		"6 figures not decidable: worse than 10%, but within what contention for CPU on B's side can explain (exit status 98)",
		"nginx c4t4 100B p99: 20.2ms → 26.3ms", "(×6.25 + 1ms: 84% of the machine's CPUs taken by other work beyond A's)",
		"1.27..1.33  contended (M in B)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if cs := RowCase(c.Rows[0]); cs.Skipped == "" || cs.Failure != "" || !strings.Contains(cs.Skipped, "not decidable") {
		t.Errorf("junit case %+v", cs)
	}
	allowed := opt
	allowed.AllowContended = true
	if c := Steps(a, b, allowed); c.Exit() != OK {
		t.Errorf("AllowContended: exit %v", c.Exit())
	}
	judged := opt
	judged.JudgeContended = true
	if c := Steps(a, b, judged); len(c.Regressions()) != 6 || c.Exit() != Breached {
		t.Errorf("JudgeContended: %v", verdicts(c))
	}

	// p99 ×4000, requests/s down 59%: latency far past ×6.25 is a
	// regression, whatever the options; the requests/s stay undecided.
	a, b = steps(80000, 1230, 0.3, 1.98)
	for _, o := range []Options{opt, allowed} {
		c := Steps(a, b, o)
		if v := verdicts(c); v["p99"] != Regression || v["rps"] != Contended || c.Exit() != Breached {
			t.Errorf("×4000 (%+v): %v, exit %v", o, v, c.Exit())
		}
		if r := c.Rows[5]; r.Metric != "p99" || r.Label() != "REGRESSION (M in B, past contention)" ||
			!strings.Contains(r.Message(), "past what contention on B's side can explain (×6.25 + 1ms") {
			t.Errorf("row %+v: %s", r, r.Message())
		}
	}

	// Contention in A alone cannot make B worse: judged as on a quiet
	// machine.
	a, b = steps(26, 2100, 1.98, 0.3)
	if c := Steps(a, b, opt); len(c.Regressions()) != 6 || c.Rows[0].Contended != "M in A" {
		t.Errorf("contended in A: %v", verdicts(c))
	}

	// B's machine busier, A's unmeasured (an older file): the widest
	// margin: L 0.94 (others 1.88 of 2 CPUs, none in A).
	a, b = steps(26, 2100, 0.3, 1.98)
	for _, st := range a {
		st.Run.Machine = nil
	}
	if c := Steps(a, b, opt); !strings.HasPrefix(c.Rows[0].Margin, "×16.7: 94%") {
		t.Errorf("A unmeasured: margin %q", c.Rows[0].Margin)
	}

	// A run that failed in B is a regression, contended or not.
	dead := step("nginx", "c4t4", 100, 1, -1, 0)
	c = Steps(a[:1], []*results.Step{dead}, Options{})
	if len(c.Regressions()) != 1 {
		t.Errorf("%+v", c.Rows)
	}
}

// Open loop: the send lag moves a percentile by the run's max lag only
// when at least its tail share of the sends were late, and not for want of
// connections.
func TestContendedSendLag(t *testing.T) {
	a, b := busy(runOf(1000, 2), 0.3), busy(runOf(1000, 2), 1.98)
	b.Summary.Latency.P50 = ms(60) // 300× A's 0.2 ms
	b.Summary.Latency.P99 = ms(60) // 30× A's 2 ms
	b.Summary.Pacing = &results.Pacing{Asked: 1000, Sent: 10000, Late: 200, MaxLag: ms(80)}
	b.Summary.Uncorrected = &results.Latency{Mean: ms(2)} // 2 requests in flight on 16 connections
	c := Runs(a, b, Options{MaxRegression: 0.10})
	v := verdicts(c)
	// 2% late: p99's tail (1%) may all be late, by up to 80 ms; p50's not.
	if v["p99"] != Contended || v["p50"] != Regression {
		t.Errorf("2%% of sends late by up to 80ms: %v", v)
	}
	b.Summary.Pacing.Late = 6000 // 60% late: p50 may move by 80 ms too
	if v := verdicts(Runs(a, b, Options{MaxRegression: 0.10})); v["p50"] != Contended {
		t.Errorf("60%% of sends late: %v", v)
	}
	// 60 ms from send to answer at 1000/s: 60 requests in flight on 16
	// connections. The sends waited for a connection the slower target
	// kept busy: that lag is B's own, and p99 ×30 a regression.
	b.Summary.Uncorrected.Mean = ms(60)
	if v := verdicts(Runs(a, b, Options{MaxRegression: 0.10})); v["p50"] != Regression || v["p99"] != Regression {
		t.Errorf("sends late for want of connections: %v", v)
	}
}

// Failed requests rising under contention: timeouts may be contention's,
// other failures are not.
func TestContendedErrors(t *testing.T) {
	a := busy(failing(10000, 20, 0), 0.3)
	b := busy(failing(10000, 20, 0), 1.98)
	b.Summary.Errors = results.Errors{Timeout: b.Summary.Requests / 20}
	if v := verdicts(Runs(a, b, Options{MaxRegression: 0.10})); v["errors"] != Contended {
		t.Errorf("5%% timeouts under contention: %v", v)
	}
	b.Summary.Errors = results.Errors{Connect: b.Summary.Requests / 20}
	if v := verdicts(Runs(a, b, Options{MaxRegression: 0.10})); v["errors"] != Regression {
		t.Errorf("5%% refused connections under contention: %v", v)
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

// Figures roll over to the next unit when rounding reaches it.
func TestFormatRollover(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{duration(999.9e3), "1ms"}, {duration(999.4e3), "999us"}, {duration(850e3), "850us"}, {duration(999.95e6), "1s"},
		{duration(23.4e6), "23.4ms"}, {duration(-584e3), "-584us"}, {duration(0), "0ns"},
		{byteSize(1023.9 * 1024), "1MiB"}, {byteSize(1536), "1.5KiB"}, {byteSize(512), "512B"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}
