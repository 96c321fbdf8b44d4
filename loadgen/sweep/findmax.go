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

// Search bounds and rules.
const (
	findMaxStart    = 100.0 // requests/s, unless the spec gives a rate
	findMaxCeiling  = 2e6
	findMaxBisect   = 8    // at most this many bisections of the bracket
	findMaxClose    = 0.05 // stop when the bracket is within 5%
	maxUnsentShare  = 0.01 // a run that could not send 1% of its schedule fails
	confirmations   = 3    // a rate's verdict rests on at most this many probes
	agree           = 2    // … and is what this many of them agree on
	findMaxVerdicts = 40   // at most this many steps of the search after the first climb
)

// errNoRun stops a search: a probe could not run at all (the path
// cannot be reached), which probing again or lower will not change.
var errNoRun = errors.New("the probe could not run")

// prober runs one probe at rate (attempt: the probes of one rate are
// numbered from 1 over the whole search) and judges it (Probe.OK, .Why).
type prober func(rate float64, attempt int) (Probe, error)

// searcher keeps what the probes of one search concluded. Overload is
// monotonic and noise is not: a rate that held shows that every failing
// rate below it was noise (they are forgotten), and a failing rate below
// one that held is not believed.
type searcher struct {
	try    prober
	tried  map[float64]int      // probes made at each rate: the next one's attempt
	judged map[float64]int      // verdicts reached at each rate
	passes map[float64]*Verdict // rates that held, provisionally (one probe) or confirmed
	fails  map[float64]*Verdict // failing rates not contradicted by a rate above them that held
}

func newSearcher(try prober) *searcher {
	return &searcher{try: try, tried: map[float64]int{}, judged: map[float64]int{},
		passes: map[float64]*Verdict{}, fails: map[float64]*Verdict{}}
}

// judge probes rate until its verdict is reached, going on from v (a
// provisional pass being confirmed) or from nothing. A rate fails on two
// misses and holds on two passes, of at most three probes; while
// exploring (confirm false) one pass is believed for now: the search
// moves on, and confirms the rate only if it is the one to report.
func (s *searcher) judge(rate float64, v Verdict, confirm bool) (Verdict, error) {
	v.Rate = rate
	for v.Passed < agree && v.Probes-v.Passed < agree && (confirm || v.Passed == 0) {
		s.tried[rate]++
		p, err := s.try(rate, s.tried[rate])
		v.Probes++
		if p.OK {
			v.Passed++
		} else {
			v.Why = p.Why
		}
		if err != nil {
			return v, err
		}
	}
	v.OK = v.Probes-v.Passed < agree
	return v, nil
}

// probe reaches a verdict at rate (confirm: goes on with the provisional
// pass there) and records it. A probe that could not be run or judged
// (err) leaves no verdict: the search stops there.
func (s *searcher) probe(rate float64, confirm bool) (Verdict, error) {
	var from Verdict
	if p := s.passes[rate]; confirm && p != nil {
		from = *p
	} else {
		s.judged[rate]++
	}
	v, err := s.judge(rate, from, confirm)
	v.Judged = s.judged[rate]
	switch {
	case err != nil:
	case v.OK:
		s.passes[rate] = &v
		delete(s.fails, rate)
		for r := range s.fails {
			if r <= rate {
				delete(s.fails, r) // noise: a higher rate held
			}
		}
	default:
		delete(s.passes, rate)
		if h := s.highest(); h == nil || h.Rate < rate {
			s.fails[rate] = &v
		}
	}
	return v, err
}

func (s *searcher) highest() *Verdict {
	var high *Verdict
	for _, v := range s.passes {
		if high == nil || v.Rate > high.Rate {
			high = v
		}
	}
	return high
}

func (s *searcher) lowest() *Verdict {
	var low *Verdict
	for _, v := range s.fails {
		if low == nil || v.Rate < low.Rate {
			low = v
		}
	}
	return low
}

// climb probes from rate up (doubling) while rates hold, and down
// (halving) while nothing has held, until the maximum is bracketed. A
// failing rate is believed only when twice the rate fails too; else the
// climb goes on from there.
func (s *searcher) climb(rate float64) error {
	for range findMaxVerdicts {
		v, err := s.probe(rate, false)
		if err != nil {
			return err
		}
		next := rate * 2
		if !v.OK {
			if up := rate * 2; up <= findMaxCeiling {
				if _, known := s.fails[up]; !known {
					u, err := s.probe(up, false)
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
		if (s.highest() != nil && s.lowest() != nil) || next > findMaxCeiling || next < 1 {
			return nil
		}
		rate = next
	}
	return nil
}

// search finds the highest rate that holds, as Nighthawk's adaptive load
// controller does: an exponential climb from start, doubling while the
// rate holds (halving while nothing has held yet), until the maximum is
// bracketed, then a bisection of the bracket to within 5%. Every rate is a
// verdict, not one probe: a miss is probed again and a rate fails on two
// misses; a rate that held once is believed while the search explores.
// Once the bracket is closed, its ends are made sure of:
//
//   - the lowest failing rate is judged again (passing, it was noise, and
//     the bisection goes on above it; the climb, when no failing rate is
//     left), unless it already was;
//   - the highest rate that held is confirmed: it holds only when two of
//     at most three probes held (the rule of every verdict, applied to
//     the rate reported). Refuted, it is the new lowest failing rate, and
//     the search goes on below it.
//
// It returns the bracket: the highest passing and the lowest failing
// verdicts (nil when there is none). The highest passing one is confirmed
// (Passed ≥ 2) unless the search was stopped (err) or ran out of steps.
func search(start float64, try prober) (pass, fail *Verdict, err error) {
	s := newSearcher(try)
	defer func() { pass, fail = s.highest(), s.lowest() }()
	if err := s.climb(math.Round(start)); err != nil {
		return nil, nil, err
	}
	for bisected, n := 0, 0; n < findMaxVerdicts; n++ {
		p, f := s.highest(), s.lowest()
		switch {
		case p == nil:
			// Nothing held, or what held was refuted: on down from the
			// lowest failing rate.
			if f == nil || math.Floor(f.Rate/2) < 1 {
				return nil, nil, nil
			}
			if err := s.climb(math.Floor(f.Rate / 2)); err != nil {
				return nil, nil, err
			}
			bisected = 0
		case f == nil && p.Rate*2 <= findMaxCeiling:
			if err := s.climb(p.Rate * 2); err != nil {
				return nil, nil, err
			}
			bisected = 0
		case f != nil && bisected < findMaxBisect && (f.Rate-p.Rate)/p.Rate > findMaxClose && f.Rate-p.Rate > 1:
			bisected++
			if _, err := s.probe(math.Round((p.Rate+f.Rate)/2), false); err != nil {
				return nil, nil, err
			}
		case f != nil && f.Judged < 2:
			v, err := s.probe(f.Rate, false) // the boundary, judged again
			if err != nil {
				return nil, nil, err
			}
			if v.OK {
				bisected = 0
			}
		case p.Passed < agree:
			v, err := s.probe(p.Rate, true) // the rate to report, confirmed
			if err != nil {
				return nil, nil, err
			}
			if !v.OK {
				bisected = 0
			}
		default:
			return nil, nil, nil
		}
	}
	return nil, nil, nil
}

// searchMax runs one search (see search) with try and fills m with what
// it found: the bracket, the rate reported (only a confirmed one), every
// probe, and the machine's state over them (Max.Machine, Max.Contended).
func searchMax(m *Max, start float64, try prober) error {
	record := func(rate float64, attempt int) (Probe, error) {
		p, err := try(rate, attempt)
		p.Rate, p.Attempt = rate, attempt
		m.Probes = append(m.Probes, p)
		return p, err
	}
	pass, fail, err := search(start, record)
	m.Pass, m.Fail = pass, fail
	if pass != nil && pass.Passed >= agree {
		m.Rate = pass.Rate
		for _, p := range m.Probes {
			if p.Rate == pass.Rate && p.OK && p.P99 > m.P99 {
				m.P99 = p.P99
			}
		}
	}
	m.summarizeMachine()
	return err
}

// FindMax searches, for every path × rung × payload, the highest open-loop
// rate that holds slo (see search). A run that could not keep its schedule
// (more than 1% of requests never sent) fails too. Every probe is saved as
// a step of the results directory; the summary goes to findmax.json
// (FindMaxFile), with r.SLO as what the SLO said.
func (r *Runner) FindMax(ctx context.Context, slo SLO) ([]Max, error) {
	if err := r.prepare(nil); err != nil {
		return nil, err
	}
	if err := r.checkWatches(); err != nil {
		return nil, err
	}
	start := r.Spec.findMaxStart()
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
				try := func(rate float64, attempt int) (Probe, error) {
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
							return Probe{}, err
						}
					}
					ids = append(ids, st.ID())
					pr := probeOf(res, slo)
					pr.Rate, pr.Attempt, pr.ID = rate, attempt, st.ID()
					ev.Kind, ev.Result, ev.Probe = StepFinished, res, &pr
					r.emit(ev)
					if res.Run == nil && ctx.Err() == nil {
						m.Failed = res.Failed
						return pr, errNoRun
					}
					return pr, ctx.Err()
				}
				err := searchMax(&m, start, try)
				out = append(out, m)
				if err != nil && !errors.Is(err, errNoRun) {
					return out, r.saveFindMax(ids, out, err)
				}
			}
		}
	}
	return out, r.saveFindMax(ids, out, nil)
}

// findMaxStart is the search's first rate: the spec's first open-loop
// rate, or 100/s.
func (s *Spec) findMaxStart() float64 {
	for _, rate := range s.Rates {
		if rate > 0 {
			return math.Round(rate)
		}
	}
	return findMaxStart
}

// probeOf judges a probe's result and keeps what the search reports of
// it: its p99 and whether the generator or the machine was saturated.
func probeOf(res *results.Step, slo SLO) Probe {
	var p Probe
	p.OK, p.Why = judge(res, slo)
	if run := res.Run; run != nil {
		p.P99 = Micros(run.Summary.Latency.P99)
		p.Generator = &GeneratorState{Utilization: run.Generator.Utilization, Saturated: run.Generator.Saturated}
		if m := run.Machine; m != nil {
			c := *m
			p.Machine = &c
		}
	}
	return p
}

// judge applies the SLO and the schedule check to a probe.
func judge(res *results.Step, slo SLO) (bool, string) {
	if res.Run == nil {
		return false, "failed: " + res.Failed
	}
	if res.Run.Interrupted {
		return false, "interrupted"
	}
	// A run that nothing answered has no latency to judge (a p99 of 0
	// holds any SLO): it fails, as does one whose target stopped answering.
	if why := res.Run.Summary.Verdict(); why != "" {
		return false, why
	}
	if p := res.Run.Summary.Pacing; p != nil && p.Sent+p.Unsent > 0 && float64(p.Unsent) > maxUnsentShare*float64(p.Sent+p.Unsent) {
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
	f := FindMaxFile{Schema: results.SchemaVersion, Tool: "loadgen", SLO: r.SLO, Searches: maxes, Interrupted: errors.Is(runErr, context.Canceled)}
	if err := store.WriteJSON(filepath.Join(r.Dir, FindMaxFileName), f); err != nil {
		return err
	}
	return runErr
}
