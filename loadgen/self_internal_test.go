package loadgen

import (
	"testing"
	"time"
)

// A window shorter than results.MinShareWindow (a short -n run) measures
// the run's start: its share is kept, consistent with its CPU time, but
// the generator is not called saturated; over a longer one it is.
func TestGeneratorCostShortWindow(t *testing.T) {
	at := time.Now()
	from := usage{at: at}
	for _, tc := range []struct {
		wall, cpu time.Duration
		share     float64
		saturated bool
	}{
		{4 * time.Millisecond, 4 * time.Millisecond, 1, false},
		{time.Second, time.Second, 1, true},
		{time.Second, 500 * time.Millisecond, 0.5, false},
	} {
		to := usage{at: at.Add(tc.wall), user: tc.cpu}
		c := generatorCost(from, to, 1, 0, 0)
		if c.Utilization != tc.share || c.Saturated != tc.saturated || c.CPUSeconds != tc.cpu.Seconds() {
			t.Errorf("%v of CPU in %v: %+v, want share %v, saturated %v", tc.cpu, tc.wall, c, tc.share, tc.saturated)
		}
	}
}
