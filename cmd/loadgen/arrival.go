package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"loadgen/loadgen/pace"
)

// arrivalFlags are the open loop's arrival process: --arrival and --jitter.
type arrivalFlags struct {
	process string
	jitter  string
}

func (a *arrivalFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.process, "arrival", "", "with -R: how requests arrive at the rate: uniform (evenly spaced, the default) or poisson (exponential gaps, independent arrivals); latency still counts from each request's intended start")
	fl.StringVar(&a.jitter, "jitter", "", "with -R: vary each gap of the uniform schedule by up to ±P% of it, e.g. 10% (fortio's -jitter); the mean rate stays the asked one")
}

// parse reads the flags given (process, jitter): the process checked, the
// jitter as a fraction of a gap (0 when not given).
func (a *arrivalFlags) parse(process, jitter bool) (j float64, err error) {
	if process {
		if err := pace.CheckProcess(a.process); err != nil {
			return 0, fmt.Errorf("--%w", err)
		}
	}
	if jitter {
		if j, err = pace.ParseJitter(a.jitter); err != nil {
			return 0, fmt.Errorf("--jitter: %w", err)
		}
	}
	return j, nil
}

// apply puts the schedule p (nil: closed loop) on the asked arrival
// process; rateFlag names the flag that asks for a schedule.
func (a *arrivalFlags) apply(p pace.Pacer, rateFlag string) (pace.Pacer, error) {
	if a.process == "" && a.jitter == "" {
		return p, nil
	}
	jitter, err := a.parse(a.process != "", a.jitter != "")
	if err != nil {
		return nil, err
	}
	if p == nil {
		what := "--arrival"
		if a.process == "" {
			what = "--jitter"
		}
		return nil, pace.ClosedLoop(what, rateFlag+" (a rate)")
	}
	q, err := pace.WithArrival(p, a.process, jitter, pace.ClockSeed())
	if err != nil {
		return nil, fmt.Errorf("--arrival %s --jitter %s: %w", a.process, a.jitter, err) // poisson with jitter
	}
	return q, nil
}
