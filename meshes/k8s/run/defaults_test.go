package run

import (
	"testing"
	"time"

	"loadgen/meshes/k8s/worker"
)

// A coordinator not told how late a worker may start allows what a worker
// not told allows, worker.DefaultMaxLate (2 s, the flags' default); a
// bound given is kept.
func TestCoordinatorMaxLate(t *testing.T) {
	if worker.DefaultMaxLate != 2*time.Second {
		t.Errorf("worker.DefaultMaxLate = %v, want 2s", worker.DefaultMaxLate)
	}
	for _, tc := range []struct{ given, want time.Duration }{
		{0, worker.DefaultMaxLate},
		{500 * time.Millisecond, 500 * time.Millisecond},
		{10 * time.Second, 10 * time.Second},
	} {
		k := &Coordinator{MaxLate: tc.given}
		k.defaults()
		if k.MaxLate != tc.want {
			t.Errorf("MaxLate %v: defaults leave %v, want %v", tc.given, k.MaxLate, tc.want)
		}
	}
}

// A coordinator not told its start lead or its wait for the target takes
// the exported defaults (k8s run's flags show them: 30 s, 5 min); a value
// given is kept. StartRetries is never filled in: 0 fails a late step, as
// --start-retries 0 asks, and DefaultStartRetries is the flag's.
func TestCoordinatorDefaults(t *testing.T) {
	if DefaultStartLead != 30*time.Second || DefaultTargetWait != 5*time.Minute || DefaultStartRetries != 2 {
		t.Errorf("defaults: start lead %v, target wait %v, start retries %d; want 30s, 5m0s, 2", DefaultStartLead, DefaultTargetWait, DefaultStartRetries)
	}
	for _, tc := range []struct {
		name       string
		given      Coordinator
		lead, wait time.Duration
		retries    int
	}{
		{"zero", Coordinator{}, DefaultStartLead, DefaultTargetWait, 0},
		{"given", Coordinator{StartLead: 8 * time.Second, TargetWait: 90 * time.Second, StartRetries: 3}, 8 * time.Second, 90 * time.Second, 3},
	} {
		k := tc.given
		k.defaults()
		if k.StartLead != tc.lead || k.TargetWait != tc.wait || k.StartRetries != tc.retries {
			t.Errorf("%s: defaults leave start lead %v, target wait %v, start retries %d; want %v, %v, %d",
				tc.name, k.StartLead, k.TargetWait, k.StartRetries, tc.lead, tc.wait, tc.retries)
		}
	}
}
