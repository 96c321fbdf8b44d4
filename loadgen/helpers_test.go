package loadgen_test

import (
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// quantileOf is the share of corrected latencies at or below v.
func quantileOf(t *testing.T, r *results.Run, v time.Duration) float64 {
	t.Helper()
	h, err := hist.Decode(r.Histograms.Latency)
	if err != nil {
		t.Fatal(err)
	}
	var at int64
	for _, b := range h.Buckets() {
		if b.To <= v {
			at += b.Count
		}
	}
	return float64(at) / float64(h.Count())
}
