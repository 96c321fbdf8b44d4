package loadgen_test

import (
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/pace"
	"loadgen/results"
)

// AskedRate reads the schedule at the measured window's time: the pacer's
// clock starts with the warm-up, so a ramp 0→1000/s over 10 s with 2 s of
// warm-up asks 200/s as the window opens, not 0. A closed loop asks none.
func TestConfigAskedRate(t *testing.T) {
	ramp := pace.Ramp{From: 0, To: 1000, Over: 10 * time.Second}
	for _, tc := range []struct {
		name   string
		pacer  pace.Pacer
		warmup time.Duration
		at     time.Duration
		want   float64
	}{
		{"closed loop", nil, 2 * time.Second, 0, 0},
		{"constant", pace.Constant{PerSec: 100}, 2 * time.Second, 5 * time.Second, 100},
		{"ramp, no warm-up, window start", ramp, 0, 0, 0},
		{"ramp, warm-up, window start", ramp, 2 * time.Second, 0, 200},
		{"ramp, warm-up, 3s in", ramp, 2 * time.Second, 3 * time.Second, 500},
		{"ramp, warm-up, past its end", ramp, 2 * time.Second, 8 * time.Second, 1000},
	} {
		cfg := loadgen.Config{Pacer: tc.pacer}
		cfg.Warmup = results.Duration(tc.warmup)
		if got := cfg.AskedRate(tc.at); got != tc.want {
			t.Errorf("%s: AskedRate(%v) = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}
