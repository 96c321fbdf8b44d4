package main

import "github.com/spf13/pflag"

// arrivalFlags are the open loop's arrival process: --arrival and --jitter,
// as typed (run: loadgen.Given; sweep: sweep.FlagValues, which check them).
type arrivalFlags struct {
	process string
	jitter  string
}

func (a *arrivalFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.process, "arrival", "", "with -R: how requests arrive at the rate: uniform (evenly spaced, the default) or poisson (exponential gaps, independent arrivals); latency still counts from each request's intended start")
	fl.StringVar(&a.jitter, "jitter", "", "with -R: vary each gap of the uniform schedule by up to ±P% of it, e.g. 10% (fortio's -jitter); the mean rate stays the asked one")
}
