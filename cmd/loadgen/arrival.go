package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/sweep"
)

// arrivalFlags are the open loop's arrival process: --arrival and --jitter.
type arrivalFlags struct {
	process string
	jitter  string
	seed    uint64 // 0: from the clock
}

func (a *arrivalFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.process, "arrival", "", "with -R: how requests arrive at the rate: uniform (evenly spaced, the default) or poisson (exponential gaps, independent arrivals); latency still counts from each request's intended start")
	fl.StringVar(&a.jitter, "jitter", "", "with -R: vary each gap of the uniform schedule by up to ±P% of it, e.g. 10% (fortio's -jitter); the mean rate stays the asked one")
}

// apply puts the schedule p (nil: closed loop) on the asked arrival
// process; rateFlag names the flag that asks for a schedule.
func (a *arrivalFlags) apply(p pace.Pacer, rateFlag string) (pace.Pacer, error) {
	if a.process == "" && a.jitter == "" {
		return p, nil
	}
	if a.process != "" {
		if err := pace.CheckProcess(a.process); err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
	}
	if p == nil {
		what := "--arrival"
		if a.process == "" {
			what = "--jitter"
		}
		return nil, pace.ClosedLoop(what, rateFlag+" (a rate)")
	}
	var jitter float64
	if a.jitter != "" {
		var err error
		if jitter, err = pace.ParseJitter(a.jitter); err != nil {
			return nil, fmt.Errorf("--jitter: %w", err)
		}
	}
	seed := a.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	q, err := pace.WithArrival(p, a.process, jitter, seed)
	if err != nil {
		return nil, fmt.Errorf("--arrival %s --jitter %s: %w", a.process, a.jitter, err) // poisson with jitter
	}
	return q, nil
}

// spec puts the flags given in a sweep's spec, and refuses them for a
// sweep with no open-loop step.
func (a *arrivalFlags) spec(s *sweep.Spec, arrival, jitter, findMax bool) error {
	if arrival {
		if err := pace.CheckProcess(a.process); err != nil {
			return fmt.Errorf("--%w", err)
		}
		s.Arrival = a.process
	}
	if jitter {
		j, err := pace.ParseJitter(a.jitter)
		if err != nil {
			return fmt.Errorf("--jitter: %w", err)
		}
		s.JitterPct = j * 100
	}
	return s.CheckArrival(findMax)
}
