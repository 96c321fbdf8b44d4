package compare

import (
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

func TestLive(t *testing.T) {
	for expr, want := range map[string]Live{
		"p99<20ms": OverWindow, "max<1s": OverWindow, "mean>1ms": OverWindow, "rps>1000": OverWindow, "rps<5k": OverWindow,
		"errors<1%": OverWindow, "timeouts<=0.5%": OverWindow,
		"errors<10": SoFar, "timeouts<=3": SoFar,
		"errors>10": AtEnd, "cpu<1": AtEnd, "cpu<50%": AtEnd, "cpu.nginx<2": AtEnd, "mem.envoy<200MiB": AtEnd,
	} {
		a, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Live(); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
	as, _ := ParseAll([]string{"p99<20ms", "cpu.nginx<2", "errors<10"})
	live, end := Judged(as)
	if len(live) != 2 || len(end) != 1 || end[0].Metric != "cpu.nginx" {
		t.Errorf("live %v, at the end %v", live, end)
	}
}

// JudgedAtEnd, the one text of what --abort-on-fail cannot judge while
// the load runs (its help and its refusal said it two ways, the help
// leaving out counts), names each kind Live judges AtEnd, its examples
// AtEnd, and gives none judged while the load runs as an example.
func TestJudgedAtEndText(t *testing.T) {
	for _, tc := range []struct {
		named string // as JudgedAtEnd names it
		expr  string
		want  Live
	}{
		{"the generator's CPU (cpu)", "cpu<50%", AtEnd},
		{"cpu.NAME", "cpu.nginx<2", AtEnd},
		{"mem.NAME", "mem.envoy<200MiB", AtEnd},
		{"a count bounded from below (errors>10)", "errors>10", AtEnd},
		{"a percentile the summary lacks (p99.5)", "p99.5<1ms", AtEnd},
		{"", "p99<20ms", OverWindow},
		{"", "errors<10", SoFar},
		{"", "errors<1%", OverWindow},
	} {
		a, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if a.Live() != tc.want {
			t.Errorf("%s: %v, want %v", tc.expr, a.Live(), tc.want)
		}
		if tc.named != "" && !strings.Contains(JudgedAtEnd, tc.named) {
			t.Errorf("JudgedAtEnd %q does not name %q (%s)", JudgedAtEnd, tc.named, tc.expr)
		}
		if tc.named == "" && strings.Contains(JudgedAtEnd, "("+tc.expr+")") {
			t.Errorf("JudgedAtEnd %q gives %s, judged while the load runs, as an example", JudgedAtEnd, tc.expr)
		}
	}
}

// Breach judges the window's figures for window assertions, the run so
// far for counts, and says which broke, with what, when.
func TestBreach(t *testing.T) {
	recent := &results.Run{Summary: results.Summary{Requests: 3000, Duration: results.Duration(3 * time.Second), RPS: 1000,
		Latency: results.Latency{Count: 3000, P50: ms(2), P99: ms(45.1)}, Errors: results.Errors{Status: 60}}}
	soFar := &results.Run{Summary: results.Summary{Requests: 9000, Duration: results.Duration(9 * time.Second), RPS: 1000,
		Errors: results.Errors{Status: 60, Timeout: 12}}}
	from, to := 6*time.Second, 9*time.Second
	for _, tc := range []struct {
		asserts []string
		want    string
	}{
		{[]string{"p99<50ms", "errors<5%"}, ""},
		{[]string{"p99<20ms"}, "aborted at 9.0 s: p99<20ms broke (p99 45.1ms over 6.0–9.0 s)"},
		{[]string{"p50<5ms", "errors<1%"}, "aborted at 9.0 s: errors<1% broke (errors 2% over 6.0–9.0 s)"},
		{[]string{"timeouts<10"}, "aborted at 9.0 s: timeouts<10 broke (timeouts 12 over 0.0–9.0 s)"},
		{[]string{"rps>1000"}, "aborted at 9.0 s: rps>1000 broke (rps 980 over 6.0–9.0 s)"},
		{[]string{"cpu.nginx<0.1", "cpu<0.01", "errors>1000000"}, ""}, // at the end only
	} {
		as, err := ParseAll(tc.asserts)
		if err != nil {
			t.Fatal(err)
		}
		if got := Breach(as, recent, soFar, from, to); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.asserts, got, tc.want)
		}
	}
	// Nothing measured in the window: a latency cannot be judged, and
	// does not stop the run.
	empty := &results.Run{Summary: results.Summary{Duration: results.Duration(3 * time.Second)}}
	as, _ := ParseAll([]string{"p99<1ms", "errors<1%"})
	if got := Breach(as, empty, empty, from, to); got != "" {
		t.Errorf("an empty window: %q", got)
	}
}

// A run that aborted reports the assertion that broke as failed, with
// what it measured then, though over the whole run, cut short, it holds.
func TestCheckMarksTheBreach(t *testing.T) {
	run := sampleRun() // p99 23.4ms, 0.2% errors
	run.Interrupted = true
	run.Aborted = "aborted at 9.0 s: p99<30ms broke (p99 45.1ms over 6.0–9.0 s)"
	as, _ := ParseAll([]string{"p99<30ms", "errors<1%"})
	c := Check{Assertions: as}
	ch := c.Run(run, run.Aborted)
	r := ch.Results[0]
	if r[0].Pass || r[0].MeasuredText != "45.1ms over 6.0–9.0 s" || r[0].Measured != 45.1 || !r[1].Pass {
		t.Errorf("%+v", r)
	}
	if ch.Failed != 1 || ch.Held != 1 || !ch.Fails() {
		t.Errorf("held %d, failed %d", ch.Held, ch.Failed)
	}
	if m := r[0].Message(); m != "p99 45.1ms over 6.0–9.0 s is not < 30ms" {
		t.Errorf("message %q", m)
	}
	// In seconds, as asserted: "p99<0.03s".
	run.Aborted = "aborted at 9.0 s: p99<0.03s broke (p99 45.1ms over 6.0–9.0 s)"
	as, _ = ParseAll([]string{"p99<0.03s"})
	c = Check{Assertions: as}
	if r := c.Run(run, "").Results[0][0]; r.Pass || r.Measured != 0.0451 {
		t.Errorf("%+v", r)
	}
}
