package merge

import (
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// Two workers' timelines, the second started 40 ms later: their intervals
// add on the clock, counts and rates summed, percentiles the larger.
func TestMergeTimelines(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC)
	sec := results.Duration(time.Second)
	iv := func(start int, req, errs int64, p99 time.Duration, warm bool) results.Interval {
		return results.Interval{Start: results.Duration(start) * sec, Duration: sec, Warmup: warm, Requests: req, Errors: errs,
			RPS: float64(req), P50: results.Duration(p99 / 2), P99: results.Duration(p99)}
	}
	a := &results.Run{Start: t0, Timeline: []results.Interval{iv(-1, 10, 0, time.Millisecond, true), iv(0, 100, 0, 2*time.Millisecond, false), iv(1, 0, 5, 0, false)}}
	b := &results.Run{Start: t0.Add(40 * time.Millisecond), Timeline: []results.Interval{iv(0, 50, 0, 3*time.Millisecond, false), iv(1, 0, 7, 0, false)}}
	out := &results.Run{Start: t0}
	tl, note := timelines(out, []Input{{Source: "a", Run: a}, {Source: "b", Run: b}})
	if len(tl) != 3 || !strings.Contains(note, "upper bound") {
		t.Fatalf("%d intervals (%+v), note %q", len(tl), tl, note)
	}
	if w := tl[0]; !w.Warmup || w.Requests != 10 || w.Start != -sec {
		t.Errorf("warm-up interval %+v", w)
	}
	if m := tl[1]; m.Requests != 150 || m.RPS != 150 || m.P99 != results.Duration(3*time.Millisecond) || m.Outage {
		t.Errorf("interval 0: %+v", m)
	}
	if o := tl[2]; o.Errors != 12 || !o.Outage {
		t.Errorf("interval 1: %+v, want 12 errors and an outage", o)
	}
	// Intervals of other lengths do not add.
	b.Timeline[0].Duration, b.Timeline[1].Duration = 2*sec, 2*sec
	if tl, note := timelines(out, []Input{{Source: "a", Run: a}, {Source: "b", Run: b}}); tl != nil || !strings.Contains(note, "differ in length") {
		t.Errorf("%+v %q", tl, note)
	}
}
