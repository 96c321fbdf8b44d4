package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// checkFlags are the CI flags of run and sweep: assertions, a JUnit
// report, and a baseline to compare with. Call parse before any load, so a
// bad assertion costs nothing, then checkRun or checkSteps on the results.
type checkFlags struct {
	asserts       []string
	junit         string
	baseline      string
	maxRegression string
	sweep         bool // the baseline is a sweep's results directory
	perSweep      bool // the baseline is a directory of sweeps, read by forSweep

	fl        *pflag.FlagSet
	parsed    []compare.Assertion
	opt       compare.Options
	baseRun   *results.Run
	baseSteps []*results.Step
}

// register adds the flags to `loadgen run`: the baseline is a run file.
func (c *checkFlags) register(fl *pflag.FlagSet) {
	c.add(fl, "a run saved with --json: compare this run with it (exit status 1 on a regression)")
}

// registerSweep adds the flags to `loadgen sweep`: assertions hold for
// every step, and the baseline is a sweep's results directory.
func (c *checkFlags) registerSweep(fl *pflag.FlagSet) {
	c.sweep = true
	c.add(fl, "a sweep's results directory: compare each step with its match there (exit status 1 on a regression)")
}

func (c *checkFlags) add(fl *pflag.FlagSet, baseline string) {
	c.fl = fl
	what, eg := "the run", "'cpu<1'"
	if c.sweep {
		what, eg = "every step", "'cpu.nginx<2'"
	}
	fl.StringArrayVar(&c.asserts, "assert", nil, "an assertion on "+what+", e.g. 'p99<20ms', 'errors<0.1%', 'rps>1000', "+eg+" (repeatable, or several split by commas; exit status 1 if one fails)")
	fl.StringVar(&c.junit, "junit", "", "write the assertions (and baseline comparison) as a JUnit XML report to this file")
	fl.StringVar(&c.baseline, "baseline", "", baseline)
	fl.StringVar(&c.maxRegression, "max-regression", "10%", "with --baseline: how much worse a real change may be before it is a regression")
}

// forSweep is c for one sweep named name of a run that makes several (loadgen
// lab: one per protocol): its JUnit file gets the name as a suffix
// (junit-tcp-rr.xml), and its baseline is name's sweep in the baseline
// directory, if any.
func (c *checkFlags) forSweep(name string) (*checkFlags, error) {
	s := *c
	s.perSweep = false
	if s.junit != "" {
		ext := filepath.Ext(s.junit)
		s.junit = strings.TrimSuffix(s.junit, ext) + "-" + name + ext
	}
	if s.baseline != "" {
		s.baseline = filepath.Join(c.baseline, name)
		if err := s.readBaseline(); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
	}
	return &s, nil
}

// parse checks the flags and reads the baseline. Its errors are usage
// errors: call it before the load.
func (c *checkFlags) parse() error {
	var exprs []string
	for _, a := range c.asserts {
		exprs = append(exprs, strings.Split(a, ",")...) // 'p99<20ms,errors<1%', as --slo
	}
	as, err := compare.ParseAll(exprs)
	if err != nil {
		return fmt.Errorf("--assert: %w", err)
	}
	c.parsed = as
	if !c.sweep {
		if err := watchedIn(as, nil, false); err != nil {
			return err
		}
	}
	if c.fl != nil && c.fl.Changed("max-regression") && c.baseline == "" {
		return errors.New("--max-regression needs --baseline: the results to compare with")
	}
	if c.maxRegression == "" {
		c.maxRegression = "10%"
	}
	maxReg, err := compare.ParsePercent(c.maxRegression)
	if err != nil {
		return fmt.Errorf("--max-regression: %w", err)
	}
	c.opt = compare.Options{Noise: compare.DefaultNoise, MaxRegression: maxReg}
	if c.junit != "" {
		dir := filepath.Dir(c.junit)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--junit %s: directory %s does not exist", c.junit, dir)
		}
	}
	if c.baseline != "" && !c.perSweep {
		if err := c.readBaseline(); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	return nil
}

func (c *checkFlags) readBaseline() error {
	dir, err := isSweepDir(c.baseline)
	if err != nil {
		return err
	}
	switch {
	case c.sweep && !dir:
		return fmt.Errorf("%s is a file: a sweep compares with a sweep's results directory", c.baseline)
	case !c.sweep && dir:
		return fmt.Errorf("%s is a directory: a run compares with a run file saved with --json", c.baseline)
	case c.sweep:
		_, steps, err := store.ReadSweep(c.baseline)
		if err != nil {
			return err
		}
		if len(steps) == 0 {
			return fmt.Errorf("%s holds no finished step", c.baseline)
		}
		c.baseSteps = steps
	default:
		run, err := readRunFile(c.baseline)
		if err != nil {
			return err
		}
		c.baseRun = run
	}
	return nil
}

func (c *checkFlags) active() bool {
	return len(c.parsed) > 0 || c.junit != "" || c.baseRun != nil || c.baseSteps != nil
}

// checkRun judges a run: one line per assertion, the comparison with the
// baseline, and the JUnit report, whose "run" case fails with verdict
// (why the run itself failed, "" if it did not). failed tells whether an
// assertion did not hold or the run regressed; err is a failure to write
// the report.
func (c *checkFlags) checkRun(stdout io.Writer, run *results.Run, verdict string) (failed bool, err error) {
	if !c.active() {
		return false, nil
	}
	class := run.Config.Target
	res := compare.EvalAll(c.parsed, run, nil)
	failed = printAssertions(stdout, []string{""}, [][]compare.Result{res})
	cases := []compare.Case{compare.RunCase(class, verdict)}
	for _, r := range res {
		cases = append(cases, compare.AssertCase(class, r))
	}
	if c.baseRun != nil {
		cmp := compare.Runs(c.baseRun, run, c.opt)
		cmp.A, cmp.B = c.baseline, "this run"
		if c.compareBaseline(stdout, cmp, &cases) {
			failed = true
		}
	}
	suite := compare.Suite{Name: "loadgen run " + run.Config.Target, Time: run.Summary.Duration.D(), Cases: cases}
	return failed, c.writeJUnit(suite)
}

// watchedIn checks, before any load, that every cpu.NAME and mem.NAME of
// as names a watched process: one of a sweep's names (sweep), or none, as
// a run watches none.
func watchedIn(as []compare.Assertion, names []string, sweep bool) error {
	flag := "--assert"
	for _, a := range as {
		p := a.Process()
		if p == "" || slices.Contains(names, p) {
			continue
		}
		if !sweep {
			return fmt.Errorf("%s %s: %s is a watched process's, and loadgen run watches none: assert it in loadgen sweep, whose paths watch processes (watch:, --watch), or assert cpu, the generator's", flag, a, a.Metric)
		}
		watched := "none"
		if len(names) > 0 {
			watched = strings.Join(names, ", ")
		}
		return fmt.Errorf("%s %s: no process is watched as %q (watched: %s): watch it on a path (watch:, --watch), or drop the assertion", flag, a, p, watched)
	}
	return nil
}

// noRun writes the JUnit report of a run that could not run at all (the
// target unreachable from the start): its "run" case fails with err.
func (c *checkFlags) noRun(target string, err error) error {
	return c.writeJUnit(compare.Suite{Name: "loadgen run " + target, Cases: []compare.Case{compare.RunCase(target, err.Error())}})
}

// checkSteps judges every step of a sweep as checkRun judges a run; a
// failed step fails its "run" case and every assertion.
func (c *checkFlags) checkSteps(stdout io.Writer, steps []*results.Step) (failed bool, err error) {
	if !c.active() {
		return false, nil
	}
	var ids []string
	var all [][]compare.Result
	var cases []compare.Case
	var took time.Duration
	watchedSomewhere := map[string]bool{}
	for _, st := range steps {
		for _, w := range st.Watched {
			watchedSomewhere[w.Name] = true
		}
	}
	for _, st := range steps {
		res := compare.EvalAll(c.parsed, st.Run, st.Watched)
		for i, a := range c.parsed {
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
		ids = append(ids, st.ID)
		all = append(all, res)
		cases = append(cases, compare.RunCase(st.ID, st.Failure()))
		for _, r := range res {
			cases = append(cases, compare.AssertCase(st.ID, r))
		}
	}
	failed = printAssertions(stdout, ids, all)
	if c.baseSteps != nil {
		cmp := compare.Steps(c.baseSteps, steps, c.opt)
		cmp.A, cmp.B = c.baseline, "this sweep"
		if c.compareBaseline(stdout, cmp, &cases) {
			failed = true
		}
	}
	return failed, c.writeJUnit(compare.Suite{Name: "loadgen sweep", Time: took, Cases: cases})
}

func watches(st *results.Step, name string) bool {
	for _, w := range st.Watched {
		if w.Name == name {
			return true
		}
	}
	return false
}

// compareBaseline prints the comparison and adds its figures to the JUnit
// cases; it tells whether anything regressed, or nothing could be compared
// (no step in common, or no request succeeded on a side): a gate that
// compared nothing must not pass.
func (c *checkFlags) compareBaseline(stdout io.Writer, cmp compare.Comparison, cases *[]compare.Case) bool {
	fmt.Fprintln(stdout)
	compare.WriteText(stdout, cmp)
	for _, r := range cmp.Rows {
		if r.Verdict != compare.Missing {
			*cases = append(*cases, compare.RowCase(r))
		}
	}
	if !cmp.Matched() {
		msg := "nothing was compared with the baseline " + c.baseline + ": no step ran on both sides with a request answered (steps match by path, rung, payload and rate)"
		fmt.Fprintln(stdout, "baseline: "+msg)
		*cases = append(*cases, compare.Case{Class: c.baseline, Name: "compared with the baseline", Failure: msg})
		return true
	}
	return len(cmp.Regressions()) > 0
}

func (c *checkFlags) writeJUnit(s compare.Suite) error {
	if c.junit == "" {
		return nil
	}
	var b bytes.Buffer
	if err := compare.WriteJUnit(&b, []compare.Suite{s}); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := store.WriteFile(c.junit, b.Bytes()); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}

// printAssertions writes a line per assertion (per step, when labels are
// step IDs) and tells whether any failed.
func printAssertions(w io.Writer, labels []string, res [][]compare.Result) (failed bool) {
	n, held, skipped := 0, 0, 0
	for _, rs := range res {
		n += len(rs)
	}
	if n == 0 {
		return false
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for i, rs := range res {
		for _, r := range rs {
			label := "assert " + r.Expr + ":"
			if labels[i] != "" {
				label = "assert " + labels[i] + " " + r.Expr + ":"
			}
			switch {
			case r.Skipped != "":
				skipped++
				fmt.Fprintf(tw, "%s\t\tskipped (%s)\n", label, r.Skipped)
			case r.Err != "":
				fmt.Fprintf(tw, "%s\t\tFAILED (%s)\n", label, r.Err)
			case r.Pass:
				held++
				fmt.Fprintf(tw, "%s\t%s\tok\n", label, r.MeasuredText)
			default:
				fmt.Fprintf(tw, "%s\t%s\tFAILED (not %s %s)\n", label, r.MeasuredText, r.Op, r.Bound)
			}
		}
	}
	tw.Flush()
	skip := ""
	if skipped > 0 {
		skip = fmt.Sprintf(", %d skipped", skipped)
	}
	if held+skipped == n {
		fmt.Fprintf(w, "assertions: all %d held%s\n", held, skip)
		return false
	}
	fmt.Fprintf(w, "assertions: %d of %d failed%s\n", n-held-skipped, n-skipped, skip)
	return true
}
