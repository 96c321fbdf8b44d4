package results

import "testing"

func TestGbps(t *testing.T) {
	for _, tc := range []struct{ written, want float64 }{{0, 0}, {125e6, 1}, {272.5e6, 2.18}} {
		if got := (Summary{WritePerSec: tc.written}).Gbps(); got != tc.want {
			t.Errorf("Gbps of %g B/s = %g, want %g", tc.written, got, tc.want)
		}
	}
}
