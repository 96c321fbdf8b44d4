package loadgen

import (
	"context"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/results"
	"loadgen/results/hist"
)

// A timeline keeps at most maxTimeline records: a run planned longer has
// records of several intervals, one that outgrows it folds them in pairs;
// counts are kept either way, and the records stay back to back.
func TestTimelineIsBounded(t *testing.T) {
	e := &engine{measure: time.Now()}
	e.cfg.Interval = time.Second
	e.cfg.Duration = results.Duration(10 * time.Hour)
	var tl timeline
	tl.init(e)
	if tl.k != 10 {
		t.Errorf("10 h at 1 s: %d intervals a record, want 10", tl.k)
	}

	e.cfg.Duration = 0 // -n only: not planned
	tl = timeline{}
	tl.init(e)
	h := hist.New()
	h.Record(time.Millisecond)
	n := maxTimeline + 500
	for i := range n {
		from := e.measure.Add(time.Duration(i) * time.Second)
		tl.add(from, from.Add(time.Second), h, ivCounts{answered: 10}, false)
	}
	got := tl.done()
	if len(got) > maxTimeline || tl.k != 2 {
		t.Fatalf("%d records, %d intervals a record", len(got), tl.k)
	}
	var req int64
	for i, iv := range got {
		req += iv.Requests
		if i > 0 && iv.Start != got[i-1].End() {
			t.Fatalf("record %d starts at %v, the one before ends at %v", i, iv.Start, got[i-1].End())
		}
		if iv.P50 != results.Duration(h.Quantile(0.5)) {
			t.Fatalf("record %d: p50 %v", i, iv.P50)
		}
	}
	if req != int64(10*n) || got[len(got)-1].End().D() != time.Duration(n)*time.Second {
		t.Errorf("%d requests to %v, want %d to %v", req, got[len(got)-1].End().D(), 10*n, time.Duration(n)*time.Second)
	}
}

// A last interval too short to stand alone is folded into the one before.
func TestTimelineFoldsAShortTail(t *testing.T) {
	e := &engine{measure: time.Now()}
	e.cfg.Interval = time.Second
	var tl timeline
	tl.init(e)
	h := hist.New()
	h.Record(time.Millisecond)
	tl.add(e.measure, e.measure.Add(time.Second), h, ivCounts{answered: 100}, false)
	tl.add(e.measure.Add(time.Second), e.measure.Add(time.Second+20*time.Millisecond), h, ivCounts{answered: 3}, false)
	got := tl.done()
	if len(got) != 1 || got[0].Requests != 103 || got[0].Duration.D() != 1020*time.Millisecond {
		t.Errorf("%+v", got)
	}
}

// Recording a request of the warm-up, which only the timeline counts,
// allocates nothing either.
func TestWarmupAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	d := rrDialer(t, echoServer(t).Addr())
	cfg := Config{}
	cfg.Connections, cfg.Threads, cfg.Duration, cfg.Warmup = 1, 1, results.Duration(time.Hour), results.Duration(time.Hour)
	cfg.setDefaults()
	e := &engine{cfg: cfg, dialer: d, runCtx: context.Background()}
	e.start = time.Now()
	e.measure = e.start.Add(time.Hour)
	e.counts = make([]counter, 1)
	sh := newShard(false, false)
	sh.wuLatency = hist.New()
	w := &worker{e: e, shard: sh, count: &e.counts[0], dialer: e.dialer}
	defer w.dropConn()
	if !w.step() || w.conn == nil {
		t.Fatal("first step failed")
	}
	if n := allocs.Count(2000, func() {
		if !w.step() {
			t.Fatal("step failed")
		}
	}); n > allocs.Slack {
		t.Errorf("%d allocations in 2000 warm-up requests, want 0", n)
	}
	if n := sh.wu.answered; n < 2000 || w.count.n.Load() != 0 {
		t.Errorf("%d warm-up requests recorded, %d measured", n, w.count.n.Load())
	}
}
