package compare

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"loadgen/results"
	"loadgen/results/store"
)

// Check is what CI judges a run or a sweep by: assertions on each run or
// step, and a baseline to compare with. loadgen run, sweep, lab, k8s run
// and study share it; the command line only parses its flags and prints
// what it found (Checked).
type Check struct {
	Assertions []Assertion
	Options    Options
	// Baseline names where the baseline was read from ("" for none):
	// BaseRun is a run's, BaseSteps a sweep's (ReadBaseline).
	Baseline  string
	BaseRun   *results.Run
	BaseSteps []*results.Step
}

// Active tells whether there is anything to judge: an assertion or a
// baseline.
func (c *Check) Active() bool {
	return len(c.Assertions) > 0 || c.BaseRun != nil || c.BaseSteps != nil
}

// Checked is what a check found.
type Checked struct {
	// Labels name what the assertions were judged on: "" for a run, the
	// step IDs of a sweep; Results are each one's, an assertion each.
	Labels  []string
	Results [][]Result
	// Held, Failed and Skipped count the assertions: Failed did not hold
	// or could not be judged (Result.Err), Skipped do not apply.
	Held, Failed, Skipped int
	// Comparison is the one with the baseline; nil without a baseline.
	Comparison *Comparison
	// Unmatched says why nothing was compared with the baseline, "" when
	// something was: a gate that compared nothing must not pass.
	Unmatched string
	// Suite is the JUnit report: a "run" case per run or step, a case per
	// assertion of each, and one per figure compared with the baseline.
	Suite Suite
}

// Fails tells whether the check failed: an assertion did not hold, a
// figure regressed (judged: contended figures are not), or nothing was
// compared with the baseline.
func (c Checked) Fails() bool {
	return c.Failed > 0 || c.Unmatched != "" || (c.Comparison != nil && len(c.Comparison.Regressions()) > 0)
}

// Exit is what the check comes to: Breached when it Fails; Undecided
// when figures compared with the baseline were worse than MaxRegression
// within what contention can explain, unless Options.AllowContended;
// else OK.
func (c Checked) Exit() Exit {
	if c.Fails() {
		return Breached
	}
	return c.Comparison.Exit()
}

// Asserted is how many assertions were judged over every run or step.
func (c Checked) Asserted() int { return c.Held + c.Failed + c.Skipped }

// Run judges a run: its assertions, and the comparison with BaseRun. The
// JUnit "run" case fails with verdict (why the run itself failed, "" if
// it did not).
func (c *Check) Run(run *results.Run, verdict string) Checked {
	class := run.Config.Target
	res := EvalAll(c.Assertions, run, nil)
	markBreach(res, run.Aborted) // --abort-on-fail: what broke, as it broke
	out := Checked{Labels: []string{""}, Results: [][]Result{res}}
	cases := []Case{RunCase(class, verdict)}
	for _, r := range res {
		cases = append(cases, AssertCase(class, r))
	}
	if c.BaseRun != nil {
		cmp := Runs(c.BaseRun, run, c.Options)
		cmp.A, cmp.B = c.Baseline, "this run"
		cases = c.baseline(&out, cmp, cases)
	}
	out.count()
	out.Suite = Suite{Name: "loadgen run " + run.Config.Target, Time: run.Summary.Duration.D(), Cases: cases, Properties: run.Labels}
	return out
}

// Steps judges every step of a sweep as Run judges a run, and compares
// the sweep with BaseSteps. A failed step fails its "run" case and every
// assertion; a cpu.NAME or mem.NAME assertion is skipped on the steps of
// a path that does not watch NAME, when another path does.
func (c *Check) Steps(steps []*results.Step) Checked {
	var out Checked
	var cases []Case
	var took time.Duration
	watchedSomewhere := map[string]bool{}
	for _, st := range steps {
		for _, w := range st.Watched {
			watchedSomewhere[w.Name] = true
		}
	}
	for _, st := range steps {
		res := EvalAll(c.Assertions, st.Run, st.Watched)
		if st.Run != nil {
			markBreach(res, st.Run.Aborted) // --abort-on-fail: what broke, as it broke
		}
		for i, a := range c.Assertions {
			switch p := a.Process(); {
			case st.Run == nil:
				res[i].Err = "the step failed: " + st.Failed
			case p != "" && watchedSomewhere[p] && !watches(st, p):
				// cpu.nginx on the path without nginx: not for this step.
				res[i].Skipped = fmt.Sprintf("%s is not watched on path %s", p, st.Path)
			}
		}
		if st.Run != nil {
			took += st.Run.Summary.Duration.D()
		}
		out.Labels = append(out.Labels, st.ID)
		out.Results = append(out.Results, res)
		cases = append(cases, RunCase(st.ID, st.Failure()))
		for _, r := range res {
			cases = append(cases, AssertCase(st.ID, r))
		}
	}
	if c.BaseSteps != nil {
		cmp := Steps(c.BaseSteps, steps, c.Options)
		cmp.A, cmp.B = c.Baseline, "this sweep"
		cases = c.baseline(&out, cmp, cases)
	}
	out.count()
	out.Suite = Suite{Name: "loadgen sweep", Time: took, Cases: cases, Properties: stepsLabels(steps)}
	return out
}

func watches(st *results.Step, name string) bool {
	for _, w := range st.Watched {
		if w.Name == name {
			return true
		}
	}
	return false
}

// baseline adds the comparison to out, and its figures to the JUnit
// cases; a comparison that matched nothing is a failed case of its own.
func (c *Check) baseline(out *Checked, cmp Comparison, cases []Case) []Case {
	out.Comparison = &cmp
	for _, r := range cmp.Rows {
		if r.Verdict != Missing {
			cases = append(cases, RowCase(r))
		}
	}
	if !cmp.Matched() {
		out.Unmatched = "nothing was compared with the baseline " + c.Baseline + ": no step ran on both sides with a request answered (steps match by path, rung, payload and rate)"
		cases = append(cases, Case{Class: c.Baseline, Name: "compared with the baseline", Failure: out.Unmatched})
	}
	return cases
}

func (c *Checked) count() {
	for _, rs := range c.Results {
		for _, r := range rs {
			switch {
			case r.Skipped != "":
				c.Skipped++
			case r.Err == "" && r.Pass:
				c.Held++
			default:
				c.Failed++
			}
		}
	}
}

// NoRun is the JUnit report of a run that could not run at all (the
// target unreachable from the start): its "run" case fails with why; its
// properties are the labels it was given.
func NoRun(target string, labels results.Labels, why error) Suite {
	return Suite{Name: "loadgen run " + target, Cases: []Case{RunCase(target, why.Error())}, Properties: labels}
}

// stepsLabels are the labels every step's run carries alike (a sweep's
// --label); steps without a run have none to say.
func stepsLabels(steps []*results.Step) results.Labels {
	var ls []results.Labels
	for _, st := range steps {
		if st.Run != nil {
			ls = append(ls, st.Run.Labels)
		}
	}
	common, _ := results.CommonLabels(ls)
	return common
}

// Unwatched checks, before any load, that every cpu.NAME and mem.NAME of
// as names a watched process: one of a sweep's names (sweep), or none, as
// a run watches none. Its error starts with the assertion.
func Unwatched(as []Assertion, names []string, sweep bool) error {
	for _, a := range as {
		p := a.Process()
		if p == "" || slices.Contains(names, p) {
			continue
		}
		if !sweep {
			return fmt.Errorf("%s: %s is a watched process's, and loadgen run watches none: assert it in loadgen sweep, whose paths watch processes (watch:, --watch), or assert cpu, the generator's", a, a.Metric)
		}
		watched := "none"
		if len(names) > 0 {
			watched = strings.Join(names, ", ")
		}
		return fmt.Errorf("%s: no process is watched as %q (watched: %s): watch it on a path (watch:, --watch), or drop the assertion", a, p, watched)
	}
	return nil
}

// ReadBaseline reads the baseline at path into c: a sweep's results
// directory for a sweep, a run file (or a sweep step's) for a run.
func (c *Check) ReadBaseline(path string, sweep bool) error {
	dir, err := IsSweepDir(path)
	if err != nil {
		return err
	}
	switch {
	case sweep && !dir:
		return fmt.Errorf("%s is a file: a sweep compares with a sweep's results directory", path)
	case !sweep && dir:
		return fmt.Errorf("%s is a directory: a run compares with a run file saved with --json", path)
	case sweep:
		_, steps, err := store.ReadSweep(path)
		if err != nil {
			return err
		}
		if len(steps) == 0 {
			return fmt.Errorf("%s holds no finished step", path)
		}
		c.Baseline, c.BaseSteps, c.BaseRun = path, steps, nil
	default:
		run, err := ReadRunFile(path)
		if err != nil {
			return err
		}
		c.Baseline, c.BaseRun, c.BaseSteps = path, run, nil
	}
	return nil
}

// IsSweepDir tells a sweep's results directory (a directory) from a run
// file.
func IsSweepDir(path string) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return false, err
	}
	return st.IsDir(), nil
}

// ReadRunFile reads a run saved by loadgen run --json, or the run of one
// sweep step file (store.ReadPath).
func ReadRunFile(path string) (*results.Run, error) {
	p, err := store.ReadPath(path)
	if err != nil {
		return nil, err
	}
	if p.Run != nil && (p.Holds == store.HoldsStep || p.Run.Config.Target != "") {
		return p.Run, nil
	}
	return nil, fmt.Errorf("%s: not a run (no target): want a file written by loadgen run --json", path)
}
