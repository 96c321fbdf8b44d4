package sweep

import (
	"context"
	"errors"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
)

// A sweep's estimate before it starts (PlanTime) and its runner's ETA
// count a step alike: warm-up, measured window and 300 ms more (StepTime).
// The CLI's header once left the 300 ms out.
func TestPlanTimeIsTheRunnersETA(t *testing.T) {
	for _, tc := range []struct {
		warmup, duration time.Duration
		steps            int
		step, plan       time.Duration
	}{
		{0, time.Second, 1, 1300 * time.Millisecond, time.Second},
		{500 * time.Millisecond, 2 * time.Second, 2, 2800 * time.Millisecond, 6 * time.Second},
		{time.Second, 10 * time.Second, 6, 11300 * time.Millisecond, 68 * time.Second},
	} {
		s := &Spec{Warmup: Duration(tc.warmup), Duration: Duration(tc.duration)}
		if got := s.StepTime(); got != tc.step {
			t.Errorf("warm-up %v, -d %v: StepTime %v, want %v", tc.warmup, tc.duration, got, tc.step)
		}
		if got := s.PlanTime(tc.steps); got != tc.plan {
			t.Errorf("warm-up %v, -d %v: PlanTime(%d) %v, want %v", tc.warmup, tc.duration, tc.steps, got, tc.plan)
		}
	}

	// The runner's ETA at each step's start: the steps left, StepTime each.
	spec := &Spec{Paths: []Path{{Name: "a", URL: "http://127.0.0.1:1"}, {Name: "b", URL: "http://127.0.0.1:1"}},
		Ladder: Ladder{{Connections: 1, Threads: 1}}, Payloads: Payloads{0}, Protocol: "http1",
		Duration: Duration(2 * time.Second), Warmup: Duration(500 * time.Millisecond), Rates: Rates{0}, Repeats: 2}
	var etas []time.Duration
	r := &Runner{Spec: spec, Dir: t.TempDir(),
		Build: func(context.Context, Path, Step) (loadgen.Config, protocol.Dialer, error) {
			return loadgen.Config{}, nil, errors.New("not built")
		},
		Events: func(ev Event) {
			if ev.Kind == StepStarted {
				etas = append(etas, ev.ETA)
			}
		}}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := len(spec.Plan())
	if n != 4 || len(etas) != n {
		t.Fatalf("%d steps started, want %d", len(etas), n)
	}
	for i, eta := range etas {
		if want := time.Duration(n-i) * spec.StepTime(); eta != want {
			t.Errorf("step %d: ETA %v, want %v", i+1, eta, want)
		}
	}
	if total := spec.PlanTime(n); total != etas[0].Round(time.Second) {
		t.Errorf("PlanTime %v, the runner's first ETA %v", total, etas[0])
	}
}
