package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"loadgen/results/hist"
)

// DefaultPercentiles are the percentiles loadgen run's summary prints,
// in percent, unless --percentiles chooses others.
var DefaultPercentiles = []float64{50, 90, 95, 99, 99.9, 99.99}

// SummaryPercentiles are the percentiles a run's summary holds (Latency.At
// knows them); any other is read from the run's histogram (Percentile).
var SummaryPercentiles = []float64{50, 75, 90, 95, 99, 99.9, 99.99}

// FormatPercentiles writes percentiles as ParsePercentiles reads them:
// "50,90,99.9".
func FormatPercentiles(ps []float64) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatFloat(p, 'f', -1, 64)
	}
	return strings.Join(s, ",")
}

// ParsePercentiles reads a list of percentiles in percent, as fortio's -p
// takes them: "50,90,95,99,99.9". Each is above 0 and below 100; the list
// keeps the order given, without repeats.
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(f), "p"), "%")
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v >= 100 {
			return nil, fmt.Errorf("%q is not a percentile: want numbers above 0 and below 100, e.g. 50,90,95,99,99.9", strings.TrimSpace(f))
		}
		dup := false
		for _, o := range out {
			dup = dup || o == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out, nil
}

// PercentileName names a percentile as the summary and the assertions do:
// 50 → "p50", 99.9 → "p99.9".
func PercentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// At is the latency's percentile p (in percent) when the summary holds it:
// one of SummaryPercentiles.
func (l Latency) At(p float64) (Duration, bool) {
	switch p {
	case 50:
		return l.P50, true
	case 75:
		return l.P75, true
	case 90:
		return l.P90, true
	case 95:
		return l.P95, true
	case 99:
		return l.P99, true
	case 99.9:
		return l.P999, true
	case 99.99:
		return l.P9999, true
	}
	return 0, false
}

// Percentile is percentile p (in percent) of a latency: the summary's
// figure when it holds it, else read from enc, the latency's histogram
// (Encoded). Its error says why there is none: no histogram to read it
// from, or one that cannot be decoded.
func Percentile(l Latency, enc string, p float64) (Duration, error) {
	if d, ok := l.At(p); ok && (d > 0 || l.Count == 0 || p != 95) {
		return d, nil // a p95 of 0 in a latency that counted requests: a file older than p95, read from its histogram
	}
	if enc == "" {
		return 0, fmt.Errorf("%s is not in the summary and the run has no histogram to read it from", PercentileName(p))
	}
	h, err := hist.Decode(enc)
	if err != nil {
		return 0, fmt.Errorf("%s: the run's histogram: %v", PercentileName(p), err)
	}
	return Duration(h.Quantile(p / 100)), nil
}
