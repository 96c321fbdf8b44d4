package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/compare"
)

// statusOf is the exit status execute gives a command's error.
func statusOf(err error) int {
	var ee exitError
	var rf runFailure
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &rf) && rf.code != compare.OK:
		return int(rf.code)
	case errors.As(err, &rf):
		return exitFail
	}
	return exitUsage
}

// TestK8sRunExitAsSweep: a k8s run ends with the status loadgen sweep
// gives the same steps (compare.FailedSteps, compare.StepsExit and the
// check): a step whose run failed its verdict (no request succeeded)
// fails it with 1, a step --abort-on-fail stopped with 108, over a 99
// from the check; before, only a step with no run (Step.Failed) counted,
// and the others exited 0 or 99.
func TestK8sRunExitAsSweep(t *testing.T) {
	ok := func(id string) *results.Step {
		return &results.Step{Schema: 1, Tool: "loadgen", ID: id, Path: "mesh", Rung: "c4t4", Payload: 100, Repeat: 1, Run: cmpRun(1000, 5)}
	}
	noAnswer := ok("mesh_c4t4_100B_closed_r2")
	noAnswer.Run.Summary.Requests, noAnswer.Run.Summary.Errors.Timeout = 0, 40
	aborted := ok("mesh_c4t4_100B_closed_r3")
	aborted.Run.Aborted = "p99<1ms broke at 2s"
	noRun := &results.Step{Schema: 1, Tool: "loadgen", ID: "mesh_c4t4_100B_closed_r4", Path: "mesh", Rung: "c4t4", Payload: 100, Repeat: 1,
		Failed: "worker 1 (pod lg-r-0-1): exit code 137"}
	for _, tc := range []struct {
		name   string
		steps  []*results.Step
		assert string
		want   int
	}{
		{"every step ran", []*results.Step{ok("mesh_c4t4_100B_closed_r1")}, "", exitOK},
		{"no request succeeded", []*results.Step{ok("mesh_c4t4_100B_closed_r1"), noAnswer}, "", exitFail},
		{"aborted", []*results.Step{ok("mesh_c4t4_100B_closed_r1"), aborted}, "", exitAborted},
		{"aborted over a breached check", []*results.Step{ok("mesh_c4t4_100B_closed_r1"), aborted}, "p99<1ms", exitAborted},
		{"no answer over a breached check", []*results.Step{noAnswer}, "p99<1ms", exitFail},
		{"no run", []*results.Step{noRun}, "", exitFail},
		{"no run and aborted", []*results.Step{aborted, noRun}, "", exitFail},
		{"a breached check alone", []*results.Step{ok("mesh_c4t4_100B_closed_r1")}, "p99<1ms", exitBreached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			if tc.assert != "" {
				args = []string{"--assert", tc.assert}
			}
			c, err := chkFlags(t, true, args...)
			if err != nil {
				t.Fatal(err)
			}
			f := &k8sRunFlags{out: t.TempDir(), check: *c}
			var out bytes.Buffer
			code := statusOf(f.finish(&out, &sweep.Spec{}, tc.steps))
			checked, _ := c.checkSteps(&bytes.Buffer{}, tc.steps)
			sweepCode := int(compare.Worst(compare.StepsExit(tc.steps), checked)) // sweep_job.go's
			if code != tc.want || code != sweepCode {
				t.Errorf("exit %d, want %d (sweep's for these steps: %d)\n%s", code, tc.want, sweepCode, out.String())
			}
		})
	}
}

// A k8s run ends with the results line lab and study end with
// (store.ResultsLine, store.ReadWith): where its steps are, how many
// failed, and how to read them.
func TestK8sRunResultsLine(t *testing.T) {
	ok := &results.Step{Schema: 1, Tool: "loadgen", ID: "mesh_c4t4_100B_closed_r1", Path: "mesh", Rung: "c4t4", Payload: 100, Repeat: 1, Run: cmpRun(1000, 5)}
	noRun := &results.Step{Schema: 1, Tool: "loadgen", ID: "mesh_c4t4_100B_closed_r2", Path: "mesh", Rung: "c4t4", Payload: 100, Repeat: 1,
		Failed: "worker 1 (pod lg-r-0-1): exit code 137"}
	for _, tc := range []struct {
		steps []*results.Step
		want  string
	}{
		{[]*results.Step{ok}, "results: DIR (1 step, 0 failed; loadgen report DIR)"},
		{[]*results.Step{ok, noRun}, "results: DIR (2 steps, 1 failed; loadgen report DIR)"},
	} {
		c, err := chkFlags(t, true)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		f := &k8sRunFlags{out: dir, check: *c}
		var out bytes.Buffer
		_ = f.finish(&out, &sweep.Spec{}, tc.steps)
		want := strings.ReplaceAll(tc.want, "DIR", dir)
		if !strings.Contains(out.String(), "\n"+want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
