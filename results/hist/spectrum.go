package hist

import (
	"fmt"
	"io"
	"math"
	"time"
)

// TicksPerHalfDistance is how finely wrk2 steps its percentile spectrum:
// 5 rows for each halving of the distance to 100% (0, 10 … 50%, 55 … 75%,
// 77.5 … 87.5% …), HdrHistogram's percentile iteration.
const TicksPerHalfDistance = 5

// WritePercentiles prints the full percentile spectrum as wrk2 prints it
// after "Detailed Percentile spectrum:" (HdrHistogram_c's
// hdr_percentiles_print, classic layout), values in milliseconds with as
// many decimals as the histogram has significant figures: the header, a
// blank line, a row per step of HdrHistogram's percentile iteration with
// TicksPerHalfDistance ticks — the highest value equivalent to the one at
// that percentile, the percentile as a fraction, the count of values up to
// it and 1/(1-percentile), "inf" on the last row, at 100% — then the
// #[Mean …], #[Max …] and #[Buckets …] lines. HdrHistogram's plotter and
// the scripts written for wrk2 read it.
//
// Max is the highest value equivalent to the largest recorded, as in the
// last row, in HdrHistogram's Java and current C libraries and in loadgen's
// other figures; wrk2's 2014 copy of the C library printed the lowest,
// at most one bucket (0.1%) below.
func (h *Histogram) WritePercentiles(w io.Writer) error {
	const ms = float64(time.Millisecond)
	row := fmt.Sprintf("%%12.%df %%12f %%12d %%12s\n", SigFigs)
	if _, err := fmt.Fprintf(w, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)"); err != nil {
		return err
	}
	for _, b := range h.h.CumulativeDistributionWithTicks(TicksPerHalfDistance) {
		q := b.Quantile / 100
		if _, err := fmt.Fprintf(w, row, float64(b.ValueAt)/ms, q, b.Count, inverse(q)); err != nil {
			return err
		}
	}
	buckets, subBuckets := geometry()
	_, err := fmt.Fprintf(w, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n#[Max     = %12.*f, Total count    = %12d]\n#[Buckets = %12d, SubBuckets     = %12d]\n",
		SigFigs, h.h.Mean()/ms, SigFigs, h.h.StdDev()/ms, SigFigs, float64(h.Max())/ms, h.Count(), buckets, subBuckets)
	return err
}

// inverse is the 1/(1-Percentile) column: two decimals, or "inf" at 100%
// as C's printf writes it (Go's would be "+Inf").
func inverse(q float64) string {
	v := 1 / (1 - q)
	if math.IsInf(v, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.2f", v)
}

// geometry returns the bucket and sub-bucket counts of the fixed geometry,
// as HdrHistogram derives them: sub-buckets enough for unit resolution up
// to 2×10^SigFigs, in units of the largest power of two not above Lowest,
// and buckets, each twice the span of the last, until Highest fits.
func geometry() (buckets, subBuckets int) {
	subBuckets = 1 << int(math.Ceil(math.Log2(2*math.Pow10(SigFigs))))
	unit := int64(1) << int(math.Floor(math.Log2(float64(Lowest))))
	buckets = 1
	for span := int64(subBuckets) * unit; span <= Highest; span <<= 1 {
		buckets++
	}
	return buckets, subBuckets
}

// Percentile returns the value at percentile p in [0, 100] (99.9 is
// p99.9) as HdrHistogram's value at percentile: the highest value
// equivalent to the one of rank ⌊p/100 × count + ½⌋; zero when empty.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(max(Lowest, h.h.ValueAtPercentile(math.Max(0, math.Min(100, p)))))
}
