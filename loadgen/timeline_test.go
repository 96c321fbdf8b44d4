package loadgen_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/results"
)

// switchServer answers 200 until its switch says otherwise: then 500 (an
// error status), or it hangs until the client gives up (an outage).
type switchServer struct {
	*httptest.Server
	first  atomic.Int64 // unix nanos of the first request
	mode   func(since time.Duration) string
	served atomic.Int64
}

func newSwitchServer(t *testing.T, mode func(since time.Duration) string) *switchServer {
	t.Helper()
	s := &switchServer{mode: mode}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		s.first.CompareAndSwap(0, now)
		s.served.Add(1)
		switch s.mode(time.Duration(now - s.first.Load())) {
		case "fail":
			w.WriteHeader(http.StatusInternalServerError)
			return
		case "hang":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		w.Write([]byte("hello"))
	}))
	startBoth(s.Server)
	t.Cleanup(s.Close)
	return s
}

// checkTimeline checks what every timeline keeps: warm-up first, the
// intervals back to back from the warm-up's start to the window's end,
// the measured ones adding up to the summary.
func checkTimeline(t *testing.T, r *results.Run) {
	t.Helper()
	tl := r.Timeline
	if len(tl) == 0 {
		t.Fatal("no timeline")
	}
	var req, errs, timeouts int64
	warm := true
	for i, iv := range tl {
		if iv.Warmup && !warm {
			t.Errorf("interval %d: a warm-up interval after the measured ones", i)
		}
		if !iv.Warmup && warm {
			warm = false
			if iv.Start != 0 {
				t.Errorf("the first measured interval starts at %v, want 0", iv.Start.D())
			}
			if i > 0 && tl[i-1].End() != 0 {
				t.Errorf("the warm-up ends at %v, want 0", tl[i-1].End().D())
			}
		}
		if i > 0 && iv.Start != tl[i-1].End() {
			t.Errorf("interval %d starts at %v, the one before ended at %v", i, iv.Start.D(), tl[i-1].End().D())
		}
		if d := iv.Duration.D(); d <= 0 || d > 1500*time.Millisecond {
			t.Errorf("interval %d lasts %v", i, d)
		}
		if (iv.Requests == 0 && iv.Errors > 0) != iv.Outage {
			t.Errorf("interval %d: %d answered, %d failed, outage %v", i, iv.Requests, iv.Errors, iv.Outage)
		}
		if iv.P999 != 0 && iv.Requests+iv.Errors-iv.Status < results.MinP999 {
			t.Errorf("interval %d: p99.9 of %d requests", i, iv.Requests)
		}
		if !iv.Warmup {
			req, errs, timeouts = req+iv.Requests, errs+iv.Errors, timeouts+iv.Timeouts
		}
	}
	if last := tl[len(tl)-1]; last.Warmup || last.End() != r.Summary.Duration {
		t.Errorf("the timeline ends at %v (warm-up %v), the window at %v", last.End().D(), last.Warmup, r.Summary.Duration.D())
	}
	s := r.Summary
	if req != s.Requests || errs != s.Errors.Total() || timeouts != s.Errors.Timeout {
		t.Errorf("the measured intervals count %d requests, %d errors, %d timeouts; the summary %d, %d, %d",
			req, errs, timeouts, s.Requests, s.Errors.Total(), s.Errors.Timeout)
	}
}

// Every run records its timeline: the warm-up's intervals marked and
// before 0, the measured ones adding up to the summary, with their rate
// and latency.
func TestTimeline(t *testing.T) {
	forDriversPlain(t, func(t *testing.T) {
		srv := newServer(t, nil)
		var cfg loadgen.Config
		cfg.Connections, cfg.Rate = 2, 200
		cfg.Warmup, cfg.Duration = results.Duration(1200*time.Millisecond), results.Duration(2200*time.Millisecond)
		r := run(t, cfg, srv.URL)
		checkTimeline(t, r)
		var warm int64
		for _, iv := range r.Timeline {
			if iv.Warmup {
				if iv.Start >= 0 {
					t.Errorf("a warm-up interval starts at %v", iv.Start.D())
				}
				warm += iv.Requests
				continue
			}
			if iv.Duration.D() >= 500*time.Millisecond && (iv.Requests == 0 || iv.P50 <= 0 || iv.P99 < iv.P50 || iv.RPS < 100 || iv.RPS > 300) {
				t.Errorf("measured interval %+v: want about 200 requests/s and their latency", iv)
			}
		}
		if warm < 200 || warm > 260 {
			t.Errorf("%d requests in the warm-up's intervals, want ≈ 240", warm)
		}
		if r.Timeline[0].Start.D() != -1200*time.Millisecond {
			t.Errorf("the timeline starts at %v, want -1.2s", r.Timeline[0].Start.D())
		}
	})
}

// A target that stops answering shows as an outage: intervals with
// nothing answered and requests failing.
func TestTimelineMarksOutage(t *testing.T) {
	forDriversPlain(t, func(t *testing.T) {
		srv := newSwitchServer(t, func(since time.Duration) string {
			if since > 1100*time.Millisecond && since < 3300*time.Millisecond {
				return "hang"
			}
			return ""
		})
		cfg := conf(2, 4*time.Second)
		cfg.Timeout = results.Duration(250 * time.Millisecond)
		r := run(t, cfg, srv.URL)
		checkTimeline(t, r)
		outs := results.Outages(r.Timeline)
		if len(outs) == 0 {
			t.Fatalf("no outage in the timeline: %+v", r.Timeline)
		}
		if o := outs[0]; o[0] < time.Second || o[1] > 3500*time.Millisecond {
			t.Errorf("outage from %v to %v, want within 1.1–3.3 s", o[0], o[1])
		}
	})
}

// Judge stops a run that breaks its bound (--abort-on-fail), once it has
// a whole window to judge: the result is the run so far, interrupted and
// aborted with the reason. A judge that finds nothing wrong lets it run.
func TestJudgeStopsRun(t *testing.T) {
	forDriversPlain(t, func(t *testing.T) {
		srv := newSwitchServer(t, func(since time.Duration) string {
			if since > 1500*time.Millisecond {
				return "fail"
			}
			return ""
		})
		var mu sync.Mutex
		var seen []loadgen.Window
		cfg := conf(2, 20*time.Second)
		cfg.JudgeWindow, cfg.JudgeAfter = time.Second, 500*time.Millisecond
		cfg.Judge = func(w loadgen.Window) string {
			mu.Lock()
			seen = append(seen, w)
			mu.Unlock()
			if w.Recent.Errors.Status > 0 {
				return "aborted: errors"
			}
			return ""
		}
		r := run(t, cfg, srv.URL)
		if !r.Interrupted || r.Aborted != "aborted: errors" {
			t.Fatalf("interrupted %v, aborted %q", r.Interrupted, r.Aborted)
		}
		if d := r.Summary.Duration.D(); d < 1500*time.Millisecond || d > 3500*time.Millisecond {
			t.Errorf("stopped after %v, want within 2 s of the breach at 1.5 s", d)
		}
		if r.Summary.Errors.Status == 0 || r.Summary.Requests == 0 {
			t.Errorf("the result lacks the run so far: %+v", r.Summary)
		}
		checkTimeline(t, r)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			t.Fatal("never judged")
		}
		// A whole window of 1 s is one of the run's intervals: as long as
		// the reporter's ticks made it (a busy machine can delay them), so
		// it is checked against the timeline, not a fixed bound. The last
		// one judged may have the run's short tail folded into it.
		tl := r.Timeline
		isInterval := func(w loadgen.Window) bool {
			for i, iv := range tl {
				if iv.Start.D() == w.From && (iv.End().D() == w.To || i == len(tl)-1 && iv.End().D() > w.To) {
					return true
				}
			}
			return false
		}
		for _, w := range seen {
			if w.To < time.Second || w.To-w.From < 900*time.Millisecond || !isInterval(w) {
				t.Errorf("judged %v–%v: want a whole window of 1 s, one of the run's intervals, from 1 s on", w.From, w.To)
			}
			if w.SoFar.Requests < w.Recent.Requests || w.SoFar.Duration.D() != w.To {
				t.Errorf("so far %+v, recent %+v", w.SoFar, w.Recent)
			}
		}
		if w := seen[0]; w.Recent.Latency.Count == 0 || w.Recent.RPS <= 0 {
			t.Errorf("the first window has no figures: %+v", w.Recent)
		}
	})
}

func TestJudgeLetsAHealthyRunEnd(t *testing.T) {
	srv := newServer(t, nil)
	var judged atomic.Int64
	cfg := conf(2, 2500*time.Millisecond)
	cfg.JudgeWindow = time.Second
	cfg.Judge = func(w loadgen.Window) string {
		judged.Add(1)
		return ""
	}
	r := run(t, cfg, srv.URL)
	if r.Interrupted || r.Aborted != "" || judged.Load() == 0 {
		t.Errorf("interrupted %v, aborted %q, judged %d times", r.Interrupted, r.Aborted, judged.Load())
	}
	checkTimeline(t, r)
}
