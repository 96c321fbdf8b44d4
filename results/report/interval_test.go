package report

import (
	"strings"
	"testing"

	"loadgen/results"
)

// repeated is s with every step run three times: latencies and the
// watched processes' CPU scaled by each repeat's factor.
func repeated(s *Sweep, scale map[string][3]float64) *Sweep {
	out := *s
	out.Steps = nil
	for r := range 3 {
		for _, st := range s.Steps {
			c := *st
			c.Repeat = r + 1
			c.ID = strings.TrimSuffix(st.ID, "_r1") + "_r" + string(rune('1'+r))
			if st.Run != nil {
				run := *st.Run
				f := scale[st.Path][r]
				l := &run.Summary.Latency
				l.P50, l.P90, l.P99, l.P999 = sc(l.P50, f), sc(l.P90, f), sc(l.P99, f), sc(l.P999, f)
				c.Run = &run
			}
			c.Watched = nil
			for _, w := range st.Watched {
				w.CPUMean *= scale[st.Path][r]
				c.Watched = append(c.Watched, w)
			}
			out.Steps = append(out.Steps, &c)
		}
	}
	return &out
}

func sc(d results.Duration, f float64) results.Duration { return results.Duration(float64(d) * f) }

// With repeats, the figures added over the baseline come with their
// interval over the repeats of both, and the legend says what it is.
func TestSweepTableIntervals(t *testing.T) {
	s := repeated(fixtureSweep(t)[0], map[string][3]float64{"baseline": {1, 1.02, 0.98}, "nginx": {1, 1.05, 0.97}})
	out := sweepTable(t, s, TableOptions{Wide: true})
	for _, want := range []string{
		"+2.21ms [+2.14ms..+2.33ms]", // c1t1 100 B: 2.32ms ×0.97..1.05 over 108us ×0.98..1.02
		"+0.049 [+0.046..+0.052]",    // +cpu/1k
		"-90.1us [-577us..+591us]",   // c64t64 1 KiB +p99.9: within noise
		"[lo..hi]: the added figure's 90% interval over the repeats of the path and of baseline",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// At 120 columns, +p99 keeps its interval and the table its width.
	out = sweepTable(t, s, TableOptions{})
	if !strings.Contains(out, "+437us [+396us..+497us]") {
		t.Errorf("+p99 without its interval:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > DefaultWidth {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	// One repeat: no interval, nor a word of one.
	if out := sweepTable(t, fixtureSweep(t)[0], TableOptions{Wide: true}); strings.Contains(out, "[") || strings.Contains(out, "interval") {
		t.Errorf("intervals without repeats:\n%s", out)
	}
}

// An added latency below 0 says what it is: within noise (its interval
// spans 0, or one repeat gives none), contended (G or M on either side),
// or, its whole interval below 0, nothing: a real decrease.
func TestSweepTableNegativeAdded(t *testing.T) {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	one := fixtureSweep(t)[0]
	if out := norm(sweepTable(t, one, TableOptions{Wide: true})); !strings.Contains(out, "+427us -618us within noise +0.033") {
		t.Errorf("one repeat:\n%s", out)
	}
	s := repeated(one, map[string][3]float64{"baseline": {1, 1.02, 0.98}, "nginx": {1, 1.05, 0.97}})
	if out := norm(sweepTable(t, s, TableOptions{Wide: true})); !strings.Contains(out, "-90.1us [-577us..+591us] within noise") {
		t.Errorf("an interval spanning 0:\n%s", out)
	}
	// nginx at c16t16 100 B a third faster at p99.9 in every repeat: real.
	fast := repeated(one, map[string][3]float64{"baseline": {1, 1.01, 0.99}, "nginx": {0.5, 0.51, 0.49}})
	if out := norm(sweepTable(t, fast, TableOptions{Wide: true})); strings.Contains(out, "] within noise") || !strings.Contains(out, "-3.04ms [-3.15ms..-2.94ms] +0.010") {
		t.Errorf("whole intervals below 0 marked:\n%s", out)
	}
	for _, st := range one.Steps {
		if st.Path == "baseline" && st.Run != nil && st.Rung == "c16t16" {
			st.Run.Generator.Saturated = true
		}
	}
	if out := norm(sweepTable(t, one, TableOptions{Wide: true})); !strings.Contains(out, "-618us contended") {
		t.Errorf("baseline saturated:\n%s", out)
	}
}
