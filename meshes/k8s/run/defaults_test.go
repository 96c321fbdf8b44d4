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
