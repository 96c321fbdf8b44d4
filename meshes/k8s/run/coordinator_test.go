package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// TestRecordFailsAStatusMix checks that on a cluster as locally, a path whose
// every answer was ingress-nginx's 308 where the baseline at the same step
// answered 200 fails its step, with one line, whichever ran first; its
// saved step says so.
func TestRecordFailsAStatusMix(t *testing.T) {
	step := func(id, path string, baseline bool, status int) *results.Step {
		return &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", ID: id, Path: path, Baseline: baseline, Rung: "c8t2", Payload: 100, Repeat: 1,
			Run: &results.Run{Config: results.Config{Protocol: "http1"}, Summary: results.Summary{Requests: 1000, Status: map[int]int64{status: 1000}}}}
	}
	dir := t.TempDir()
	for _, d := range []string{store.StepsDir, WorkersDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var said []string
	k := &Coordinator{Dir: dir, Events: func(f string, a ...any) { said = append(said, f) }}
	mesh, direct := step("nginx_1", "ingress-nginx", false, 308), step("direct_1", "direct", true, 200)
	if err := k.record(nil, mesh, nil); err != nil {
		t.Fatal(err)
	}
	if err := k.record([]*results.Step{mesh}, direct, nil); err != nil {
		t.Fatal(err)
	}
	saved, err := store.ReadStep(filepath.Join(dir, store.StepsDir, "nginx_1.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "ingress-nginx answered 308 to every request: the target was never reached"
	if !strings.Contains(saved.Failure(), want) || len(said) != 1 {
		t.Errorf("the saved mesh step: %q (said %v), want %q", saved.Failure(), said, want)
	}
	if saved, err := store.ReadStep(filepath.Join(dir, store.StepsDir, "direct_1.json")); err != nil || saved.Failure() != "" {
		t.Errorf("the baseline's step: %v %v", saved, err)
	}
}
