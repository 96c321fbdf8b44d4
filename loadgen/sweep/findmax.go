package sweep

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"loadgen/results"
	"loadgen/results/store"
)

// SLO judges a run: ok, or why not ("p99 12.1ms is not < 10ms").
type SLO func(run *results.Run) (ok bool, why string)

// Probe is one run of the search for the maximum rate.
type Probe struct {
	Rate float64 `json:"rate"`
	OK   bool    `json:"ok"`
	Why  string  `json:"why,omitempty"`
	ID   string  `json:"id"`
}

// Max is the highest open-loop rate that held the SLO on one path, rung and
// payload, and how the search got there.
type Max struct {
	Path    string  `json:"path"`
	Rung    string  `json:"rung"`
	Payload int     `json:"payload"`
	Rate    float64 `json:"max_rate"` // 0: even the lowest rate failed
	P99     string  `json:"p99_at_max,omitempty"`
	Probes  []Probe `json:"probes"`
}

// Search bounds.
const (
	findMaxStart   = 100.0 // requests/s, unless the spec gives a rate
	findMaxCeiling = 2e6
	findMaxBisect  = 6    // halvings of the bracket after the exponential phase
	findMaxClose   = 0.05 // stop when the bracket is within 5%
	maxUnsentShare = 0.01 // a run that could not send 1% of its schedule fails
)

// FindMax searches, for every path × rung × payload, the highest open-loop
// rate that holds slo: doubling from the start rate until a run fails, then
// bisecting between the last good and the first bad rate, as Nighthawk's
// adaptive load controller does. A run that could not keep its schedule
// (more than 1% of requests never sent) fails too. Every probe is saved as a
// step of the results directory; the summary goes to findmax.json.
func (r *Runner) FindMax(ctx context.Context, slo SLO) ([]Max, error) {
	if err := r.prepare(nil); err != nil {
		return nil, err
	}
	if err := r.checkWatches(); err != nil {
		return nil, err
	}
	start := findMaxStart
	for _, rate := range r.Spec.Rates {
		if rate > 0 {
			start = rate
			break
		}
	}
	var out []Max
	var ids []string
	n := 0
	for _, payload := range r.Spec.Payloads {
		for _, rung := range r.Spec.Ladder {
			for _, p := range r.Spec.Paths {
				m := Max{Path: p.Name, Rung: rung.String(), Payload: payload}
				probe := func(rate float64) (bool, error) {
					st := Step{Index: n, Path: p.Name, Rung: rung, Payload: payload, Rate: math.Round(rate), Repeat: 1}
					n++
					r.emit(Event{Kind: StepStarted, Step: st, N: n - 1})
					res := r.runStep(ctx, st, Event{Kind: StepStarted, Step: st, N: n - 1})
					if err := store.WriteJSON(r.stepFile(st), res); err != nil {
						return false, err
					}
					ids = append(ids, st.ID())
					r.emit(Event{Kind: StepFinished, Step: st, N: n - 1, Result: res})
					ok, why := judge(res, slo)
					m.Probes = append(m.Probes, Probe{Rate: st.Rate, OK: ok, Why: why, ID: st.ID()})
					if ok && st.Rate > m.Rate {
						m.Rate = st.Rate
						m.P99 = res.Run.Summary.Latency.P99.String()
					}
					return ok, ctx.Err()
				}
				// Double while the SLO holds (halve while it fails) to
				// bracket the maximum, then bisect the bracket.
				good, bad := 0.0, 0.0
				for rate := start; ; {
					ok, err := probe(rate)
					if err != nil {
						return append(out, m), r.saveFindMax(ids, append(out, m), err)
					}
					if ok {
						good = rate
						if bad > 0 || rate*2 > findMaxCeiling {
							break
						}
						rate *= 2
					} else {
						bad = rate
						if good > 0 || rate/2 < 1 {
							break
						}
						rate /= 2
					}
				}
				for i := 0; i < findMaxBisect && good > 0 && bad > 0 && (bad-good)/good > findMaxClose; i++ {
					mid := (good + bad) / 2
					ok, err := probe(mid)
					if err != nil {
						return append(out, m), r.saveFindMax(ids, append(out, m), err)
					}
					if ok {
						good = mid
					} else {
						bad = mid
					}
				}
				out = append(out, m)
			}
		}
	}
	return out, r.saveFindMax(ids, out, nil)
}

// judge applies the SLO and the schedule check to a probe.
func judge(res *results.Step, slo SLO) (bool, string) {
	if res.Run == nil {
		return false, "failed: " + res.Failed
	}
	if res.Run.Interrupted {
		return false, "interrupted"
	}
	if p := res.Run.Summary.Pacing; p != nil && p.Sent > 0 && float64(p.Unsent) > maxUnsentShare*float64(p.Sent+p.Unsent) {
		return false, fmt.Sprintf("could not keep the schedule: %d requests never sent", p.Unsent)
	}
	return slo(res.Run)
}

// saveFindMax records the probes in the manifest (so reports read them as
// steps) and the summary in findmax.json.
func (r *Runner) saveFindMax(ids []string, maxes []Max, runErr error) error {
	if err := r.writeManifest(ids); err != nil {
		return err
	}
	if err := store.WriteJSON(filepath.Join(r.Dir, "findmax.json"), maxes); err != nil {
		return err
	}
	return runErr
}
