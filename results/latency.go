package results

import "loadgen/results/hist"

// Reduce summarises a histogram into the figures every report prints.
func Reduce(h *hist.Histogram) Latency {
	d := func(q float64) Duration { return Duration(h.Quantile(q)) }
	return Latency{
		Count:        h.Count(),
		Min:          Duration(h.Min()),
		Mean:         Duration(h.Mean()),
		StdDev:       Duration(h.StdDev()),
		Max:          Duration(h.Max()),
		WithinStdDev: h.WithinStdDev(),
		P50:          d(0.50),
		P75:          d(0.75),
		P90:          d(0.90),
		P95:          d(0.95),
		P99:          d(0.99),
		P999:         d(0.999),
		P9999:        d(0.9999),
	}
}
