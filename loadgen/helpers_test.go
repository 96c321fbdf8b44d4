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

// eventually polls cond for up to 10 s and fails t if it never holds: a
// wait for what a target counts after its answer, never a speed asserted.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
