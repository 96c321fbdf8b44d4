package loadgen

import (
	"context"
	"runtime"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/loadgen/protocol"
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

// cutRun is a reporter over two shards of a closed loop, in its measured
// window, for driving interval cuts by hand.
func cutRun(t *testing.T) (*engine, *reporter) {
	t.Helper()
	e := &engine{measure: time.Unix(1_800_000_000, 0)}
	e.cfg.Interval = time.Second
	e.shards = []*shard{newShard(false, false), newShard(false, false)}
	e.shards[1].index = 1
	e.counts = make([]counter, 1)
	r := newReporter(e)
	r.measuring, r.ivFrom = true, e.measure
	return e, r
}

// answer settles a request of the measured window in sh, lat after its
// send: an answer (status 200) with err None, else a failure of class err.
func answer(e *engine, sh *shard, err protocol.ErrClass, lat time.Duration) {
	sent := e.measure.Add(time.Millisecond)
	r := request{sent: sent, first: sent, pick: -1}
	o := protocol.Outcome{Status: 200, Err: err}
	e.settle(sh, &e.counts[0], &r, &o, sent.Add(lat), false)
}

// checkInterval says whether iv holds answered answers and failed
// failures, its p50 and p99 at p50 and p99.
func checkInterval(t *testing.T, i int, iv results.Interval, answered, failed int64, p50, p99 time.Duration) {
	t.Helper()
	if iv.Requests != answered || iv.Errors != failed || !near(iv.P50.D(), p50) || !near(iv.P99.D(), p99) {
		t.Errorf("interval %d: %d answered, %d failed, p50 %v, p99 %v; want %d, %d, %v, %v",
			i, iv.Requests, iv.Errors, iv.P50.D(), iv.P99.D(), answered, failed, p50, p99)
	}
}

// An interval's counts and its latencies are of the same requests, though
// workers go on recording while the reporter cuts. Here requests settle in
// shard 0 after the reporter took shard 0's interval and before it is done
// with shard 1 (the test holds shard 1's lock meanwhile): they belong to
// the next interval, their counts as their latencies.
func TestIntervalCountsAreItsLatencies(t *testing.T) {
	e, r := cutRun(t)
	sh0, sh1 := e.shards[0], e.shards[1]
	answer(e, sh0, protocol.None, time.Millisecond)

	sh0.mu.Lock()
	before := sh0.ivLatency
	sh0.mu.Unlock()
	sh1.mu.Lock()
	cut := make(chan struct{})
	go func() {
		r.interval(e.measure.Add(time.Second))
		close(cut)
	}()
	for swapped := false; !swapped; runtime.Gosched() { // until the reporter took shard 0's interval
		sh0.mu.Lock()
		swapped = sh0.ivLatency != before
		sh0.mu.Unlock()
	}
	answer(e, sh0, protocol.None, 7*time.Millisecond)
	answer(e, sh0, protocol.Read, 30*time.Millisecond)
	sh1.mu.Unlock()
	<-cut

	r.interval(e.measure.Add(2 * time.Second))
	tl := r.tl.done()
	if len(tl) != 2 {
		t.Fatalf("%d intervals, want 2", len(tl))
	}
	checkInterval(t, 0, tl[0], 1, 0, time.Millisecond, time.Millisecond)
	checkInterval(t, 1, tl[1], 1, 1, 7*time.Millisecond, 30*time.Millisecond)
}

// A response whose latency a shard holds when the interval is cut counts
// in that interval, though its thread's counter (Req/Sec), which settle
// adds to after the shard's lock, does not have it yet.
func TestIntervalCountsAResponseItsCounterLacks(t *testing.T) {
	e, r := cutRun(t)
	answer(e, e.shards[0], protocol.None, time.Millisecond)
	o := protocol.Outcome{Status: 200}
	e.shards[1].response(&o, e.measure.Add(time.Millisecond), 5*time.Millisecond, 5*time.Millisecond) // settle's first half
	r.interval(e.measure.Add(time.Second))
	e.counts[0].n.Add(1) // its second half
	r.interval(e.measure.Add(2 * time.Second))
	tl := r.tl.done()
	if len(tl) != 2 {
		t.Fatalf("%d intervals, want 2", len(tl))
	}
	checkInterval(t, 0, tl[0], 2, 0, time.Millisecond, 5*time.Millisecond)
	checkInterval(t, 1, tl[1], 0, 0, 0, 0)
}
