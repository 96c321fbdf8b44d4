package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// The over-time fixtures are real results: testdata/timeline/run.json is
// `loadgen run -R 1500 -c 8 -d 12s --warmup 3s` of loadgen's httpbin,
// stopped for about 2.5 s in the middle (an outage: connects refused),
// testdata/timeline/sweep a sweep of it over c1t1 and c4t4, 3 s with a
// 1 s warm-up.
func fixtureTimelineRun(t testing.TB) []*Sweep {
	t.Helper()
	run, err := store.ReadRun("testdata/timeline/run.json")
	if err != nil {
		t.Fatal(err)
	}
	return []*Sweep{SingleRun("timeline.json", run)}
}

func fixtureTimelineSweep(t testing.TB) []*Sweep {
	return []*Sweep{readSweep(t, "testdata/timeline/sweep")}
}

func htmlOf(t *testing.T, sweeps []*Sweep) string {
	t.Helper()
	return string(render(t, func(b *bytes.Buffer) error { return HTML(b, sweeps, Options{}) }))
}

var (
	overTimeFigure  = regexp.MustCompile(`(?s)<figure class="panel wide">\s*<figcaption><span class="ctitle">Over time</span>.*?</figure>`)
	overTimeDetails = regexp.MustCompile(`(?s)<details class="overtime".*?</details>`)
)

// The run's page draws the run over time, after its percentile curve, and
// the chart is what the golden file holds.
func TestOverTimeGolden(t *testing.T) {
	run := fixtureTimelineRun(t)
	page := htmlOf(t, run)
	fig := overTimeFigure.FindString(page)
	if fig == "" {
		t.Fatal("the run's page has no over-time chart")
	}
	if strings.Index(page, "Latency by percentile") > strings.Index(page, fig) {
		t.Error("the over-time chart comes before the percentile curve")
	}
	golden(t, "timeline/run-overtime.html", []byte(fig+"\n"))

	sweep := htmlOf(t, fixtureTimelineSweep(t))
	det := overTimeDetails.FindString(sweep)
	if det == "" {
		t.Fatal("the sweep's page has no steps over time")
	}
	golden(t, "timeline/sweep-overtime.html", []byte(det+"\n"))

	// Results from before timelines draw none.
	if p := htmlOf(t, fixtureRun(t)); strings.Contains(p, `class="chart overtime"`) {
		t.Error("a run without a timeline has an over-time chart")
	}
	if p := htmlOf(t, fixtureSweep(t)); strings.Contains(p, `<details class="overtime"`) {
		t.Error("a sweep without timelines has steps over time")
	}
}

// The chart holds what the timeline says: the warm-up shaded up to 0, a
// band per outage, a line per figure, a bar per interval with errors, a
// tooltip per interval; and it is well-formed XML.
func TestOverTimeDrawsTheTimeline(t *testing.T) {
	run := fixtureTimelineRun(t)[0].Steps[0].Run
	tl := run.Timeline
	o := &overTime{ID: "t", Title: "Over time", Wide: true, Color: "#2563eb", Intervals: tl, Outages: results.RunOutages(run)}
	svg := o.SVG()
	if err := wellFormed(svg); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(svg, -1)) }
	outs := results.RunOutages(run)
	if len(outs) != 1 {
		t.Fatalf("the fixture has %d outages, want 1", len(outs))
	}
	if n := count(`<rect class="outage"`); n != len(outs) {
		t.Errorf("%d outage bands, want %d", n, len(outs))
	}
	if n := count(`<rect class="warmup"`); n != 1 {
		t.Errorf("%d warm-up shades, want 1", n)
	}
	// requests/s, p50, p99 and p99.9 (the fixture's intervals count 1000
	// and more requests).
	if n := count(`<path class="series"`); n != 4 {
		t.Errorf("%d lines, want 4", n)
	}
	bars := 0
	for _, iv := range tl {
		if iv.Errors > 0 {
			bars++
		}
		if iv.Timeouts > 0 {
			bars++
		}
	}
	if n := count(`<rect class="bar"`); n != bars || bars == 0 {
		t.Errorf("%d error bars, want %d", n, bars)
	}
	if n := count(`<rect class="hover"`); n != len(tl) {
		t.Errorf("%d tooltips, want one per interval, %d", n, len(tl))
	}
	if !strings.Contains(svg, "(warm-up)") || !strings.Contains(svg, "outage from ") {
		t.Error("the tooltips do not say which intervals are the warm-up's and where the outage was")
	}
	// The latency lines break where nothing was answered.
	p50 := regexp.MustCompile(`<path class="series" data-series="1" d="([^"]*)"`).FindStringSubmatch(svg)
	if p50 == nil || strings.Count(p50[1], "M") != 2 {
		t.Errorf("the p50 line should break once, at the outage: %v", p50)
	}
}

// A sweep's steps each have their chart, open when there are few; an
// aborted step's says why.
func TestStepsOverTime(t *testing.T) {
	s := fixtureTimelineSweep(t)[0]
	cells := Cells(s.Steps)
	charts, open := stepsOverTime("b", cells, map[string]string{"baseline": baselineColor})
	if len(charts) != 2 || !open {
		t.Fatalf("%d charts, open %v", len(charts), open)
	}
	if charts[0].Title != "c1t1 · baseline" || charts[1].Title != "c4t4 · baseline" {
		t.Errorf("titles %q, %q", charts[0].Title, charts[1].Title)
	}
	run := *s.Steps[1].Run
	run.Aborted, run.Interrupted = "aborted at 3.0 s: p99<1ms broke (p99 1.2ms over 0.0–3.0 s)", true
	st := *s.Steps[1]
	st.Run = &run
	charts, _ = stepsOverTime("b", Cells([]*results.Step{s.Steps[0], &st}), nil)
	if !strings.HasPrefix(charts[1].Note, "Aborted at 3.0 s: p99<1ms broke") {
		t.Errorf("an aborted step's chart: %q", charts[1].Note)
	}
	var many []*results.Step
	for range 3 {
		many = append(many, s.Steps...)
	}
	if _, open := stepsOverTime("b", Cells(many), nil); open {
		t.Error("six steps over time shown open")
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{-3, 12, "-2s 0s 2s 4s 6s 8s 10s 12s"},
		{0, 3, "0s 500ms 1s 1.5s 2s 2.5s 3s"},
		{-30, 600, "0s 2m 4m 6m 8m 10m"},
		{0, 3600, "0s 10m 20m 30m 40m 50m 1h"},
	} {
		var got []string
		for _, v := range timeTicks(tc.lo, tc.hi) {
			got = append(got, fmtSeconds(v))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("[%g, %g]: %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
