package loadgen

import (
	"math"
	"testing"
	"time"

	"loadgen/loadgen/pace"
	"loadgen/results/hist"
)

// Each stage's figures are the intervals whose middle falls in it: with a
// 1 s warm-up, the first stage's measured part is its last second, an
// interval across a stage's edge goes where most of it is, and each
// stage's asked rate is its own schedule's over its intervals.
func TestStageSummaries(t *testing.T) {
	p, err := pace.Parse("100/2s,400/2s,0-400/2s")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e := &engine{pacer: p, start: start, measure: start.Add(time.Second)}
	r := &reporter{e: e}
	r.stages = stagesOf(p)
	r.stAcc = make([]stageAcc, 3)
	fast, slow := hist.New(), hist.New()
	fast.Record(time.Millisecond)
	slow.Record(100 * time.Millisecond)
	// Measured intervals, from the schedule's start: [1, 2.1) s in stage
	// 1 (100/s, and 400/s for its last 0.1 s), [2.1, 3.1) and [3.1, 4.1)
	// in stage 2 (middles 2.6 s, 3.6 s), [4.1, 6) in stage 3.
	for _, iv := range []struct {
		from, to time.Duration
		n        int64
		h        *hist.Histogram
	}{{1000, 2100, 110, fast}, {2100, 3100, 400, slow}, {3100, 4100, 390, slow}, {4100, 6000, 360, fast}} {
		from, to := start.Add(iv.from*time.Millisecond), start.Add(iv.to*time.Millisecond)
		r.stageCut(from, to, iv.h, ivCounts{answered: iv.n})
	}
	got := r.stageSummaries()
	if len(got) != 3 {
		t.Fatalf("%d stages: %+v", len(got), got)
	}
	for i, want := range []struct {
		spec            string
		start, d        time.Duration
		requests        int64
		asked, achieved float64
		p99             time.Duration
	}{
		{"100/2s", 0, 1100 * time.Millisecond, 110, (100 + 40) / 1.1, 110 / 1.1, time.Millisecond},
		// 1.9 s at 400/s, and the ramp's first 0.1 s: 1 request.
		{"400/2s", 1100 * time.Millisecond, 2 * time.Second, 790, (760 + 1) / 2.0, 395, 100 * time.Millisecond},
		// The ramp's 400 requests but that one.
		{"0-400/2s", 3100 * time.Millisecond, 1900 * time.Millisecond, 360, 399 / 1.9, 360 / 1.9, time.Millisecond},
	} {
		s := got[i]
		if s.Stage != want.spec || s.Start.D() != want.start || s.Duration.D() != want.d || s.Requests != want.requests {
			t.Errorf("stage %d: %s from %v for %v, %d requests; want %s from %v for %v, %d", i+1,
				s.Stage, s.Start.D(), s.Duration.D(), s.Requests, want.spec, want.start, want.d, want.requests)
		}
		if math.Abs(s.Achieved-want.achieved) > 0.01 {
			t.Errorf("stage %d: achieved %v, want %v", i+1, s.Achieved, want.achieved)
		}
		if math.Abs(s.Asked-want.asked) > 1 {
			t.Errorf("stage %d: asked %v, want %v", i+1, s.Asked, want.asked)
		}
		if p99 := s.Latency.P99.D(); p99 < want.p99 || p99 > want.p99*102/100 {
			t.Errorf("stage %d: p99 %v, want %v", i+1, p99, want.p99)
		}
	}
}
