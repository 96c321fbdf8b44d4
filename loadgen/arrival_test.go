package loadgen_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen/pace"
)

// On Poisson arrivals the engine sends each request at the Poisson
// schedule's time, and counts its latency from there: the coordinated-
// omission correction holds. One connection at 200/s for 3 s against a
// target that stalls 500 ms once, at its 200th request: the requests the
// schedule put in the stall wait for it, and those put in its first
// (stall − 100 ms) are above 100 ms, however many the draw put there.
func TestPoissonArrivals(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		const stallAt = 200
		var mu sync.Mutex
		var got []time.Time // when the target received each request
		srv := newServer(t, func(n int64) time.Duration {
			mu.Lock()
			got = append(got, time.Now())
			mu.Unlock()
			if n == stallAt {
				return 500 * time.Millisecond
			}
			return 0
		})
		p, err := pace.WithArrival(pace.Constant{PerSec: 200}, pace.Poisson, 0, 11)
		if err != nil {
			t.Fatal(err)
		}
		cfg := conf(1, 3*time.Second)
		cfg.Pacer = p
		r := run(t, cfg, srv.URL)
		if r.Config.Arrival != pace.Poisson {
			t.Errorf("config arrival %q", r.Config.Arrival)
		}
		at := func(i int) time.Duration { d, _ := p.Intended(uint64(i)); return d }

		// Before the stall each request reaches the target at its
		// schedule's time, give or take a wake-up: the sends follow the
		// Poisson draw, not an even spacing (which would wander from it by
		// tens of milliseconds within 100 requests).
		mu.Lock()
		recv := slices.Clone(got)
		mu.Unlock()
		if len(recv) < stallAt {
			t.Fatalf("%d requests reached the target", len(recv))
		}
		// Each send's distance from its time, less the median one (the
		// clocks' origins differ): a machine's stall moves a few sends,
		// not the median.
		var d, off []time.Duration
		for i := range stallAt - 1 {
			d = append(d, recv[i].Sub(recv[0])-at(i))
		}
		mid := slices.Clone(d)
		slices.Sort(mid)
		for _, x := range d {
			off = append(off, max(x-mid[len(mid)/2], mid[len(mid)/2]-x))
		}
		slices.Sort(off)
		if med := off[len(off)/2]; med > 3*time.Millisecond {
			t.Errorf("the target saw the requests a median %v off the Poisson schedule", med)
		}

		s := r.Summary
		stall := s.Uncorrected.Max.D()
		if stall < 500*time.Millisecond || stall > 700*time.Millisecond {
			t.Fatalf("uncorrected max %v, want the 500 ms stall", stall)
		}
		if mx := s.Latency.Max.D(); mx < stall || mx > stall+100*time.Millisecond {
			t.Errorf("corrected max %v, want ≈ the %v stall", mx, stall)
		}
		if p99 := s.Uncorrected.P99.D(); p99 > 50*time.Millisecond {
			t.Errorf("uncorrected p99 %v: only one request was slow", p99)
		}
		// Corrected, the requests the schedule put within the stall's
		// first (stall − 100 ms) are above 100 ms: counted from the draw.
		from := at(stallAt - 1)
		want := 0
		for i := stallAt - 1; at(i) < from+stall-100*time.Millisecond; i++ {
			want++
		}
		extra := max(0, float64(s.Pacing.Late)-float64(want)-20)
		above := float64(s.Requests) * (1 - quantileOf(t, r, 100*time.Millisecond))
		if above < float64(want)-10 || above > float64(want)+40+extra {
			t.Errorf("%.0f requests above 100 ms, the schedule put %d in the first %v of the stall (%d sends late)", above, want, stall-100*time.Millisecond, s.Pacing.Late)
		}
	})
}
