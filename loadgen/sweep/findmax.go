package sweep

import (
	"context"
	"errors"
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
	Rate    float64 `json:"rate"`
	Attempt int     `json:"attempt"` // 1, or 2 and 3 when the rate was probed again to confirm a failure
	OK      bool    `json:"ok"`
	Why     string  `json:"why,omitempty"`
	ID      string  `json:"id"`
}

// Verdict is what the probes at one rate concluded. A probe that holds
// the SLO is believed; a miss is probed again: the rate fails on two
// misses in a row. One missed SLO is not believed on its own: on a shared
// machine one short probe misses for reasons of its own.
// Probes and Passed count every probe of the rate (a failing rate near the
// maximum is judged twice, see search).
type Verdict struct {
	Rate   float64 `json:"rate"`
	OK     bool    `json:"ok"`
	Probes int     `json:"probes"` // how many probes the verdict rests on
	Passed int     `json:"passed"` // how many of them held the SLO
	Why    string  `json:"why,omitempty"`
}

// Max is the highest open-loop rate that held the SLO on one path, rung and
// payload, the bracket the search ended with, and how it got there.
type Max struct {
	Path    string  `json:"path"`
	Rung    string  `json:"rung"`
	Payload int     `json:"payload"`
	Rate    float64 `json:"max_rate"` // 0: even the lowest rate failed
	P99     string  `json:"p99_at_max,omitempty"`
	// Pass and Fail bracket the maximum: the highest rate that passed and
	// the lowest that failed (nil: none passed, or none failed up to the
	// ceiling of 2,000,000/s).
	Pass   *Verdict `json:"highest_passing,omitempty"`
	Fail   *Verdict `json:"lowest_failing,omitempty"`
	Probes []Probe  `json:"probes"`
	// Failed is why a probe had no run at all (the path cannot be
	// reached): the search of this path stopped there.
	Failed string `json:"failed,omitempty"`
	// Saturated counts the probes during which the whole machine's CPUs
	// were saturated (every process, /proc/stat): their verdicts may
	// measure contention, other processes' included, not the path.
	Saturated int `json:"machine_saturated_probes,omitempty"`
}

// Search bounds.
const (
	findMaxStart    = 100.0 // requests/s, unless the spec gives a rate
	findMaxCeiling  = 2e6
	findMaxBisect   = 8    // at most this many bisections of the bracket
	findMaxClose    = 0.05 // stop when the bracket is within 5%
	maxUnsentShare  = 0.01 // a run that could not send 1% of its schedule fails
	confirmFails    = 2    // misses in a row at one rate before it fails
	findMaxVerdicts = 40   // at most this many steps of the search after the first climb
)

// errNoRun stops a search: a probe could not run at all (the path
// cannot be reached), which probing again or lower will not change.
var errNoRun = errors.New("the probe could not run")

// tryRate runs one probe at rate (attempt from 1) and judges it.
type tryRate func(rate float64, attempt int) (ok bool, why string, err error)

// verdict probes rate until the probes agree (see Verdict), numbering
// its attempts after those of prior, whose counts it adds to.
func verdict(rate float64, prior Verdict, try tryRate) (Verdict, error) {
	v := Verdict{Rate: rate}
	for {
		ok, why, err := try(rate, prior.Probes+v.Probes+1)
		v.Probes++
		if ok {
			v.Passed++
		} else {
			v.Why = why
		}
		if err != nil {
			return v, err
		}
		switch {
		case ok:
			v.OK = true
		case v.Probes-v.Passed < confirmFails:
			continue
		}
		v.Probes, v.Passed = v.Probes+prior.Probes, v.Passed+prior.Passed
		if !v.OK && v.Why == "" {
			v.Why = prior.Why
		}
		return v, nil
	}
}

// search finds the highest rate that holds, as Nighthawk's adaptive load
// controller does: an exponential climb from start, doubling while the
// rate holds (halving while nothing has held yet), until the maximum is
// bracketed, then a bisection of the bracket to within 5%. Every rate is a
// verdict, not one probe, and overload is monotonic, which noise is not:
// in the climb a failing rate is believed only when twice that rate fails
// too (a pass above a failure shows it was noise), and once bisected the
// lowest failing rate is judged again (passing, it was noise, and the
// bisection goes on above it; the climb, when no failing rate is left).
// The lowest failing rate returned was judged failing twice (four misses in
// a row) unless the search ran out of steps. It returns the bracket: the
// highest passing and the lowest failing verdicts (nil when there is none).
func search(start float64, try tryRate) (pass, fail *Verdict, err error) {
	fails := map[float64]Verdict{} // failing verdicts not contradicted by a pass above them
	probe := func(rate float64) (Verdict, error) {
		v, err := verdict(rate, fails[rate], try)
		if err != nil {
			return v, err
		}
		if v.OK {
			if pass == nil || rate > pass.Rate {
				pass = &v
			}
			for r := range fails {
				if r <= rate {
					delete(fails, r) // noise: a higher rate held
				}
			}
		} else {
			fails[rate] = v
		}
		return v, nil
	}
	lowest := func() *Verdict {
		var low *Verdict
		for _, v := range fails {
			if low == nil || v.Rate < low.Rate {
				low = &v
			}
		}
		return low
	}
	defer func() { fail = lowest() }()

	// climb probes from rate up (doubling) while rates hold, and down
	// (halving) while nothing has held, until the maximum is bracketed.
	climb := func(rate float64) error {
		for range findMaxVerdicts {
			v, err := probe(rate)
			if err != nil {
				return err
			}
			next := rate * 2
			if !v.OK {
				// Believed when twice the rate fails too; else climb on from there.
				if up := rate * 2; up <= findMaxCeiling {
					if _, known := fails[up]; !known {
						u, err := probe(up)
						if err != nil {
							return err
						}
						if u.OK {
							if next = up * 2; next > findMaxCeiling {
								return nil
							}
							rate = next
							continue
						}
					}
				}
				next = math.Floor(rate / 2)
			}
			if (pass != nil && lowest() != nil) || next > findMaxCeiling || next < 1 {
				return nil
			}
			rate = next
		}
		return nil
	}
	if err := climb(math.Round(start)); err != nil {
		return pass, nil, err
	}
	// Bisect; a boundary judged again and refuted opens a new bracket above
	// it, with bisections of its own (or, when no failing rate is left,
	// the climb goes on).
	for bisected, n := 0, 0; pass != nil && n < findMaxVerdicts; n++ {
		f := lowest()
		switch {
		case f == nil:
			if pass.Rate*2 > findMaxCeiling {
				return pass, nil, nil
			}
			if err := climb(pass.Rate * 2); err != nil {
				return pass, nil, err
			}
			bisected = 0
		case bisected == findMaxBisect || (f.Rate-pass.Rate)/pass.Rate <= findMaxClose || f.Rate-pass.Rate <= 1:
			if f.Probes > confirmFails {
				return pass, nil, nil // judged again, it failed again: believed
			}
			v, err := probe(f.Rate) // the boundary, judged again
			if err != nil {
				return pass, nil, err
			}
			if v.OK {
				bisected = 0
			}
		default:
			bisected++
			if _, err := probe(math.Round((pass.Rate + f.Rate) / 2)); err != nil {
				return pass, nil, err
			}
		}
	}
	return pass, nil, nil
}

// FindMax searches, for every path × rung × payload, the highest open-loop
// rate that holds slo (see search). A run that could not keep its schedule
// (more than 1% of requests never sent) fails too. Every probe is saved as
// a step of the results directory; the summary goes to findmax.json.
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
	run := r.runProbe
	if run == nil {
		run = r.runStep
	}
	searches := len(r.Spec.Payloads) * len(r.Spec.Ladder) * len(r.Spec.Paths)
	var out []Max
	var ids []string
	n := 0
	for _, payload := range r.Spec.Payloads {
		for _, rung := range r.Spec.Ladder {
			for _, p := range r.Spec.Paths {
				m := Max{Path: p.Name, Rung: rung.String(), Payload: payload}
				p99 := map[float64]string{}
				try := func(rate float64, attempt int) (bool, string, error) {
					st := Step{Index: n, Path: p.Name, Rung: rung, Payload: payload, Rate: rate, Repeat: attempt}
					ev := Event{Kind: StepStarted, Step: st, N: n, Search: len(out) + 1, Searches: searches}
					n++
					r.emit(ev)
					// Resuming, a probe saved whole is taken as it was: the
					// search, which depends only on the verdicts, retraces
					// its steps to where it was stopped.
					res := r.complete(st)
					if res == nil {
						res = run(ctx, st, ev)
						if err := store.WriteJSON(r.stepFile(st), res); err != nil {
							return false, "", err
						}
					}
					ids = append(ids, st.ID())
					ok, why := judge(res, slo)
					if res.Run != nil && res.Run.Machine != nil && res.Run.Machine.Saturated {
						m.Saturated++
					}
					pr := Probe{Rate: rate, Attempt: attempt, OK: ok, Why: why, ID: st.ID()}
					m.Probes = append(m.Probes, pr)
					if ok && p99[rate] == "" {
						p99[rate] = res.Run.Summary.Latency.P99.String()
					}
					ev.Kind, ev.Result, ev.Probe = StepFinished, res, &pr
					r.emit(ev)
					if res.Run == nil && ctx.Err() == nil {
						m.Failed = res.Failed
						return false, why, errNoRun
					}
					return ok, why, ctx.Err()
				}
				pass, fail, err := search(start, try)
				m.Pass, m.Fail = pass, fail
				if pass != nil {
					m.Rate, m.P99 = pass.Rate, p99[pass.Rate]
				}
				out = append(out, m)
				if err != nil && !errors.Is(err, errNoRun) {
					return out, r.saveFindMax(ids, out, err)
				}
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
