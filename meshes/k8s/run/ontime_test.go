package run

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/merge"
)

// TestLateStepRunsAgain: a step that fails only because workers started
// late runs again, up to StartRetries times, each with twice the start
// lead, which the later steps keep; any other failure is not run again.
func TestLateStepRunsAgain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		retries  int
		lateRuns int  // how many runs fail late before one passes
		broken   bool // the first run fails for another reason
		runs     int
		lead     time.Duration
		failed   bool
	}{
		{name: "on time", retries: 2, lateRuns: 0, runs: 1, lead: 10 * time.Second},
		{name: "late once", retries: 2, lateRuns: 1, runs: 2, lead: 20 * time.Second},
		{name: "late twice", retries: 2, lateRuns: 2, runs: 3, lead: 40 * time.Second},
		{name: "late past the retries", retries: 2, lateRuns: 5, runs: 3, lead: 40 * time.Second, failed: true},
		{name: "no retries", retries: 0, lateRuns: 1, runs: 1, lead: 10 * time.Second, failed: true},
		{name: "broken", retries: 2, broken: true, runs: 1, lead: 10 * time.Second, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := k8s.Options{Namespace: "bench", RunID: "r1"}
			var said []string
			k := &Coordinator{Cluster: fakeCluster(t, nil), Options: o, StartLead: 10 * time.Second, StartRetries: tc.retries,
				Poll: time.Millisecond, Events: func(f string, a ...any) { said = append(said, f) }}
			var attempts []int
			var leads []time.Duration
			k.stepRunner = func(ctx context.Context, st k8s.Step, addr k8s.Addresses, off worker.Offset, attempt int) (*results.Step, []merge.Worker, bool) {
				attempts = append(attempts, attempt)
				leads = append(leads, k.StartLead)
				res := newStep(st)
				switch {
				case tc.broken:
					res.Failed = "worker 0 (pod p) failed: exit code 1"
					return res, nil, false
				case len(attempts) <= tc.lateRuns:
					res.Failed = "worker 1 (pod p) failed: started late"
					return res, nil, true
				}
				res.Run = &results.Run{}
				return res, nil, false
			}
			res, _ := k.runStepOnTime(context.Background(), k8s.Step{ID: "s0"}, k8s.Addresses{}, worker.Offset{})
			if len(attempts) != tc.runs {
				t.Fatalf("ran %d times (attempts %v), want %d", len(attempts), attempts, tc.runs)
			}
			for i, a := range attempts {
				if a != i {
					t.Errorf("run %d had attempt %d", i, a)
				}
				if want := 10 * time.Second << i; leads[i] != want {
					t.Errorf("run %d had a start lead of %v, want %v", i, leads[i], want)
				}
			}
			if k.StartLead != tc.lead {
				t.Errorf("the later steps' start lead is %v, want %v", k.StartLead, tc.lead)
			}
			if (res.Failed != "") != tc.failed {
				t.Errorf("failed %q, want failed %v", res.Failed, tc.failed)
			}
			if again := len(said); again != tc.runs-1 {
				t.Errorf("said %d lines for %d runs again: %q", again, tc.runs-1, said)
			}
		})
	}
}

// TestLateStepWaitsForItsPods: a step runs again only once the late run's
// worker pods are gone (the cost watches and the placement select a
// step's pods by its label, and would count theirs).
func TestLateStepWaitsForItsPods(t *testing.T) {
	o := k8s.Options{Namespace: "bench", RunID: "r1"}
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lg-r1-0-0-x", Namespace: "bench",
		Labels: map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: "r1", k8s.LabelName: k8s.ClientName, k8s.LabelStep: "0"}}}
	c := fakeCluster(t, []runtime.Object{old})
	var lists atomic.Int32
	c.Client.(*fake.Clientset).PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if lists.Add(1) == 3 { // the pod goes while the coordinator waits
			_ = c.Client.(*fake.Clientset).Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "bench", old.Name)
		}
		return false, nil, nil
	})
	k := &Coordinator{Cluster: c, Options: o, StartLead: time.Second, StartRetries: 1, Poll: time.Millisecond, Events: func(string, ...any) {}}
	var listsAtRetry int32
	k.stepRunner = func(ctx context.Context, st k8s.Step, addr k8s.Addresses, off worker.Offset, attempt int) (*results.Step, []merge.Worker, bool) {
		res := newStep(st)
		if attempt == 0 {
			res.Failed = "late"
			return res, nil, true
		}
		listsAtRetry = lists.Load()
		res.Run = &results.Run{}
		return res, nil, false
	}
	if res, _ := k.runStepOnTime(context.Background(), k8s.Step{ID: "s0"}, k8s.Addresses{}, worker.Offset{}); res.Failed != "" {
		t.Fatalf("failed: %s", res.Failed)
	}
	if listsAtRetry < 3 {
		t.Errorf("ran again after %d lists of the step's pods: the late run's pod was still there", listsAtRetry)
	}
	// Pods that never go: the step is not run again, and says why.
	stuck := fakeCluster(t, []runtime.Object{old})
	k = &Coordinator{Cluster: stuck, Options: o, StartLead: time.Second, StartRetries: 1, Poll: time.Millisecond, Events: func(string, ...any) {}}
	k.stepRunner = func(context.Context, k8s.Step, k8s.Addresses, worker.Offset, int) (*results.Step, []merge.Worker, bool) {
		return &results.Step{Failed: "late"}, nil, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, _ := k.runStepOnTime(ctx, k8s.Step{ID: "s0"}, k8s.Addresses{}, worker.Offset{})
	if !strings.Contains(res.Failed, "not run again") {
		t.Errorf("with the late run's pod left: %q", res.Failed)
	}
}
