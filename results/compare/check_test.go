package compare

import (
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

func mustParse(t *testing.T, exprs ...string) []Assertion {
	t.Helper()
	as, err := ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// One evaluator for run, sweep, lab, k8s run and study: assertions, the
// baseline and the JUnit cases of a run.
func TestCheckRun(t *testing.T) {
	c := Check{Assertions: mustParse(t, "p99<20ms", "errors<1%"), Options: Options{MaxRegression: 0.10},
		Baseline: "last.json", BaseRun: runOf(10000, 20)}
	got := c.Run(runOf(7000, 26), "")
	if got.Held != 1 || got.Failed != 1 || got.Skipped != 0 || !got.Fails() || got.Comparison == nil || got.Unmatched != "" {
		t.Fatalf("%+v", got)
	}
	if cmp := got.Comparison; cmp.A != "last.json" || cmp.B != "this run" || len(cmp.Regressions()) != 6 || !cmp.Rows[0].Point {
		t.Errorf("comparison %+v", cmp)
	}
	// run, two assertions, seven figures.
	if s := got.Suite; s.Name != "loadgen run http://127.0.0.1:8080/get" || len(s.Cases) != 10 || s.Cases[3].Name != "rps vs baseline" || s.Cases[3].Failure == "" {
		t.Errorf("suite %+v", s)
	}
	if got := (&Check{Assertions: mustParse(t, "p99<30ms")}).Run(runOf(1000, 20), ""); got.Fails() || got.Comparison != nil || got.Held != 1 {
		t.Errorf("%+v", got)
	}
}

// A sweep's steps: a failed step fails its assertions; a process's
// assertion is skipped on a path that does not watch it; the baseline's
// contended steps within contention's margin are undecided (98), and one
// with nothing in common fails the check.
func TestCheckSteps(t *testing.T) {
	watched := func(st *results.Step) *results.Step {
		st.Watched = []results.ProcessCost{{Name: "nginx", Samples: 10, CPUMean: 0.5, MemMax: 1 << 20}}
		return st
	}
	steps := []*results.Step{step("baseline", "c1t1", 100, 1, 1000, 10), watched(step("nginx", "c1t1", 100, 1, 1000, 30)), step("dead", "c1t1", 100, 1, -1, 0)}
	c := Check{Assertions: mustParse(t, "p99<20ms", "cpu.nginx<1")}
	got := c.Steps(steps)
	if got.Held != 2 || got.Failed != 3 || got.Skipped != 1 || !got.Fails() || got.Labels[2] != "dead_c1t1_100B_closed_r1" {
		t.Fatalf("%+v", got)
	}
	if r := got.Results[2][0]; !strings.Contains(r.Err, "the step failed") {
		t.Errorf("%+v", r)
	}
	if r := got.Results[0][1]; r.Skipped != "nginx is not watched on path baseline" {
		t.Errorf("%+v", r)
	}

	var base, now []*results.Step
	for rep := 1; rep <= 3; rep++ {
		b, n := step("nginx", "c1t1", 100, rep, 1000, 10), step("nginx", "c1t1", 100, rep, 1000, 20)
		n.Run.Machine = &results.MachineCost{CPUs: 2, BusyCores: 2, Utilization: 1, Saturated: true}
		base, now = append(base, b), append(now, n)
	}
	c = Check{Baseline: "before", BaseSteps: base, Options: Options{MaxRegression: 0.10}}
	if got := c.Steps(now); got.Fails() || got.Comparison.Rows[2].Verdict != Contended || got.Exit() != Undecided {
		t.Errorf("contended: exit %v, %+v", got.Exit(), got.Comparison.Rows)
	}
	c.Options.AllowContended = true
	if got := c.Steps(now); got.Fails() || got.Exit() != OK {
		t.Errorf("contended, allowed: exit %v", got.Exit())
	}
	c.Options.AllowContended = false
	c.Options.JudgeContended = true
	if got := c.Steps(now); !got.Fails() {
		t.Errorf("judged: %+v", got.Comparison.Rows)
	}
	c.BaseSteps = []*results.Step{step("other", "c1t1", 100, 1, 1000, 10)}
	if got := c.Steps(now); !got.Fails() || !strings.Contains(got.Unmatched, "nothing was compared with the baseline before") {
		t.Errorf("nothing in common: %+v", got)
	}
}

func TestReadBaseline(t *testing.T) {
	dir := writeSweep(t, []*results.Step{step("baseline", "c1t1", 100, 1, 1000, 10)})
	run := filepath.Join(t.TempDir(), "run.json")
	if err := store.WriteRun(run, runOf(1000, 10)); err != nil {
		t.Fatal(err)
	}
	var c Check
	if err := c.ReadBaseline(dir, true); err != nil || len(c.BaseSteps) != 1 || c.Baseline != dir {
		t.Errorf("sweep: %v %+v", err, c)
	}
	if err := c.ReadBaseline(run, false); err != nil || c.BaseRun == nil || c.BaseSteps != nil {
		t.Errorf("run: %v %+v", err, c)
	}
	for _, tc := range []struct {
		path  string
		sweep bool
		msg   string
	}{
		{run, true, "a sweep compares with a sweep's results directory"},
		{dir, false, "a run compares with a run file"},
		{filepath.Join(dir, "nope"), false, "does not exist"},
		{filepath.Join(dir, store.StepsDir, "baseline_c1t1_100B_closed_r1.json"), false, ""},
	} {
		err := c.ReadBaseline(tc.path, tc.sweep)
		if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.msg)
		}
	}
}

func TestUnwatched(t *testing.T) {
	as := mustParse(t, "p99<1ms", "cpu.nginx<1")
	if err := Unwatched(as, []string{"nginx"}, true); err != nil {
		t.Error(err)
	}
	if err := Unwatched(as, nil, false); err == nil || !strings.HasPrefix(err.Error(), "cpu.nginx<1: cpu.nginx is a watched process's, and loadgen run watches none") {
		t.Errorf("%v", err)
	}
	if err := Unwatched(as, []string{"envoy"}, true); err == nil || !strings.Contains(err.Error(), `no process is watched as "nginx" (watched: envoy)`) {
		t.Errorf("%v", err)
	}
}
