package report

import "errors"

// WrkFlags are the report flags wrk and wrk2 share with `loadgen run`, as
// given, and whether the run is an open loop (-R).
type WrkFlags struct {
	Latency     bool // --latency
	Spectrum    bool // -L
	Uncorrected bool // -U
	Open        bool // -R
	Percentiles []float64
}

// Options are the parts of the summary the flags ask for. --latency is
// wrk's and wrk2's flag: wrk, which has no -R, prints its 4-line list;
// wrk2, which always has -R, prints what -L prints.
func (f WrkFlags) Options() WrkOptions {
	return WrkOptions{
		Latency:     f.Latency && !f.Open,
		Spectrum:    f.Spectrum || (f.Latency && f.Open),
		Uncorrected: f.Uncorrected,
		Percentiles: f.Percentiles,
	}
}

// Check refuses -U on a closed loop, whose latencies count from each
// request's actual send already.
func (f WrkFlags) Check() error {
	if f.Uncorrected && !f.Open {
		return errors.New("-U prints the uncorrected latency of an open-loop run: add -R (without it each latency counts from its actual send already, and -L prints it)")
	}
	return nil
}
