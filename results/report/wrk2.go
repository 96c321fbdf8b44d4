package report

import (
	"fmt"

	"loadgen/results"
)

// wrk2Percentiles are the lines of wrk2's short Latency Distribution.
var wrk2Percentiles = []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100}

// Wrk2Uncorrected is how wrk2 names the latency it prints with -U.
const Wrk2Uncorrected = "Uncorrected Latency (measured without taking delayed starts into account)"

// wrk2Blocks prints what wrk2 prints below Thread Stats: with -L the
// recorded latency, with -U the uncorrected one after it, each as
// wrk2Latency prints it.
func wrk2Blocks(p *printer, run *results.Run, opt WrkOptions) {
	if opt.Spectrum || opt.Uncorrected {
		wrk2Latency(p, run.Histograms.Latency, "Recorded Latency")
	}
	if opt.Uncorrected && run.Summary.Uncorrected != nil {
		p.f("\n")
		wrk2Latency(p, run.Histograms.Uncorrected, Wrk2Uncorrected)
	}
}

// wrk2Latency prints one latency as wrk2 does (its print_hdr_latency):
// "Latency Distribution (HdrHistogram - what)" at 50 … 100% in wrk's
// units, the Detailed Percentile spectrum of the histogram enc, and a
// dashed line.
func wrk2Latency(p *printer, enc, what string) {
	h, err := decodeHist(enc)
	if err != nil {
		p.err = fmt.Errorf("%s: %w", what, err)
		return
	}
	p.f("  Latency Distribution (HdrHistogram - %s)\n", what)
	for _, q := range wrk2Percentiles {
		p.f("%7.3f%%", q)
		p.units(float64(h.Percentile(q).Nanoseconds())/1e3, fmtTimeUS, 10)
		p.f("\n")
	}
	p.f("\n  Detailed Percentile spectrum:\n")
	if p.err == nil {
		p.err = h.WritePercentiles(p.w)
	}
	p.f("----------------------------------------------------------\n")
}
