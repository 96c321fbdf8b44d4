package loadgen

import (
	"runtime"
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

// AllowedCPUs is the figure a run's Cost.CPUs reports: its Procs (0:
// GOMAXPROCS) capped by the CPUs it may run on and by its quota (-1:
// none; 0: the cgroup's).
func TestConfigAllowedCPUs(t *testing.T) {
	n := runtime.NumCPU()
	for _, tc := range []struct {
		name string
		cfg  Config
		want float64
	}{
		{"one P", Config{Procs: 1, CPUQuota: -1}, 1},
		{"more Ps than CPUs", Config{Procs: n + 3, CPUQuota: -1}, float64(n)},
		{"GOMAXPROCS", Config{CPUQuota: -1}, float64(min(runtime.GOMAXPROCS(0), n))},
		{"a quota under the Ps", Config{Procs: 1, CPUQuota: 0.25}, 0.25},
		{"a quota over the Ps", Config{Procs: 1, CPUQuota: 8}, 1},
	} {
		if got := tc.cfg.AllowedCPUs(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if got, eng := tc.cfg.AllowedCPUs(), generatorCost(usage{}, usage{}, max(tc.cfg.Procs, 0), tc.cfg.CPUQuota, 0).CPUs; tc.cfg.Procs > 0 && got != eng {
			t.Errorf("%s: %v, the engine's cost says %v", tc.name, got, eng)
		}
	}
}
