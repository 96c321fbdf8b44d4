package main

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"loadgen/meshes/lab"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// checkFlags are the CI flags of run and sweep: assertions, a JUnit
// report, and a baseline to compare with. Call parse before any load, so a
// bad assertion costs nothing, then checkRun or checkSteps on the results.
// What they judge, results/compare judges (compare.Check); this file parses
// the flags and prints what it found.
type checkFlags struct {
	asserts        []string
	junit          string
	baseline       string
	maxRegression  string
	judgeContended bool
	allowContended bool
	sweep          bool // the baseline is a sweep's results directory
	perSweep       bool // the baseline is a directory of sweeps, read by forSweep

	fl     *pflag.FlagSet
	parsed []compare.Assertion
	check  compare.Check
	out    io.Writer // standard output, for --junit -; nil where the command cannot write it there
}

// register adds the flags to `loadgen run`: the baseline is a run file.
func (c *checkFlags) register(fl *pflag.FlagSet) {
	c.add(fl, fmt.Sprintf("a run saved with --json, e.g. base.json: compare this run with it (exit status %d on a regression)", compare.Breached))
}

// registerSweep adds the flags to `loadgen sweep`: assertions hold for
// every step, and the baseline is a sweep's results directory.
func (c *checkFlags) registerSweep(fl *pflag.FlagSet) {
	c.sweep = true
	c.add(fl, fmt.Sprintf("a sweep's results directory, e.g. results/main: compare each step with its match there (exit status %d on a regression)", compare.Breached))
}

func (c *checkFlags) add(fl *pflag.FlagSet, baseline string) {
	c.fl = fl
	what, eg := "the run", "'cpu<1'"
	if c.sweep {
		what, eg = "every step", "'cpu.nginx<2'"
	}
	fl.StringArrayVar(&c.asserts, "assert", nil, fmt.Sprintf("an assertion on %s, e.g. 'p99<20ms', 'errors<0.1%%', 'rps>1000', %s (repeatable, or several split by commas; exit status %d if one fails)", what, eg, compare.Breached))
	fl.StringVar(&c.junit, "junit", "", "write the assertions (and baseline comparison) as a JUnit XML report to this file, e.g. junit.xml (- for stdout)")
	fl.StringVar(&c.baseline, "baseline", "", baseline)
	fl.StringVar(&c.maxRegression, "max-regression", compare.FormatPercent(compare.DefaultMaxRegression), "with --baseline: how much worse a real change may be before it is a regression")
	fl.BoolVar(&c.allowContended, "allow-contended", false, fmt.Sprintf("with --baseline: exit %d, not %d, when the only doubt is contention: figures worse than --max-regression but within what a saturated machine (M) or generator (G) on this side can explain (a change past that is a regression whatever the flags)", compare.OK, compare.Undecided))
	fl.BoolVar(&c.judgeContended, "judge-contended", false, "with --baseline: judge the figures of saturated steps (M, G) as the others, without the margin contention could explain")
}

// forSweep is c for one sweep named name of a run that makes several (loadgen
// lab: one per protocol): its JUnit file gets the name as a suffix
// (junit-tcp-rr.xml), and its baseline is name's sweep in the baseline
// directory, if any.
func (c *checkFlags) forSweep(name string) (*checkFlags, error) {
	s := *c
	s.perSweep = false
	if s.junit != "" {
		s.junit = compare.JUnitFile(s.junit, name)
	}
	if s.baseline != "" {
		s.baseline = lab.SweepDir(c.baseline, name)
		if err := s.check.ReadBaseline(s.baseline, s.sweep); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
	}
	return &s, nil
}

// parse checks the flags and reads the baseline. Its errors are usage
// errors: call it before the load.
func (c *checkFlags) parse() error {
	as, err := compare.ParseAll(c.asserts) // 'p99<20ms,errors<1%', as --slo
	if err != nil {
		return fmt.Errorf("--assert: %w", err)
	}
	c.parsed = as
	if !c.sweep {
		if err := watchedIn(as, nil, false); err != nil {
			return err
		}
	}
	given := func(name string) bool { return c.fl != nil && c.fl.Changed(name) }
	if c.maxRegression, err = compare.CheckBaselineFlags(given, c.baseline, c.maxRegression); err != nil {
		return err
	}
	maxReg, err := compare.ParsePercent(c.maxRegression)
	if err != nil {
		return fmt.Errorf("--max-regression: %w", err)
	}
	c.check = compare.Check{Assertions: as, Options: compare.Options{Noise: compare.DefaultNoise, MaxRegression: maxReg,
		JudgeContended: c.judgeContended, AllowContended: c.allowContended}}
	if store.IsStdout(c.junit) && c.out == nil {
		return compare.JUnitNotStdout(c.junit, "this command writes several reports")
	}
	if c.junit != "" && !store.IsStdout(c.junit) {
		if err := store.CheckWritable(c.junit); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if c.baseline != "" && !c.perSweep {
		if err := c.check.ReadBaseline(c.baseline, c.sweep); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	return nil
}

func (c *checkFlags) active() bool {
	return c.check.Active() || c.junit != ""
}

// checkRun judges a run: one line per assertion, the comparison with the
// baseline, and the JUnit report, whose "run" case fails with verdict
// (why the run itself failed, "" if it did not). code is what the check
// found: compare.Breached when an assertion did not hold or the run
// regressed, compare.Undecided when contention leaves a change undecided;
// err is a failure to write the report.
func (c *checkFlags) checkRun(stdout io.Writer, run *results.Run, verdict string) (code compare.Exit, err error) {
	if !c.active() {
		return compare.OK, nil
	}
	return c.print(stdout, c.check.Run(run, verdict))
}

// checkSteps judges every step of a sweep as checkRun judges a run; a
// failed step fails its "run" case and every assertion.
func (c *checkFlags) checkSteps(stdout io.Writer, steps []*results.Step) (code compare.Exit, err error) {
	if !c.active() {
		return compare.OK, nil
	}
	return c.print(stdout, c.check.Steps(steps))
}

// print writes what the check found: a line per assertion, the
// comparison with the baseline; and the JUnit report.
func (c *checkFlags) print(stdout io.Writer, ch compare.Checked) (code compare.Exit, err error) {
	printAssertions(stdout, ch)
	if ch.Comparison != nil {
		fmt.Fprintln(stdout)
		compare.WriteText(stdout, *ch.Comparison)
		if ch.Unmatched != "" {
			fmt.Fprintln(stdout, "baseline: "+ch.Unmatched)
		}
	}
	return ch.Exit(), c.writeJUnit(ch.Suite)
}

// watchedIn checks, before any load, that every cpu.NAME and mem.NAME of
// as names a watched process: one of a sweep's names (sweep), or none, as
// a run watches none.
func watchedIn(as []compare.Assertion, names []string, sweep bool) error {
	if err := compare.Unwatched(as, names, sweep); err != nil {
		return fmt.Errorf("--assert %w", err)
	}
	return nil
}

// noRun writes the JUnit report of a run that could not run at all (the
// target unreachable from the start): its "run" case fails with err.
func (c *checkFlags) noRun(target string, labels results.Labels, err error) error {
	return c.writeJUnit(compare.NoRun(target, labels, err))
}

func (c *checkFlags) writeJUnit(s compare.Suite) error {
	if c.junit == "" {
		return nil
	}
	var b bytes.Buffer
	if err := compare.WriteJUnit(&b, []compare.Suite{s}); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := writeOutput(c.out, c.junit, b.Bytes()); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}

// printAssertions writes a line per assertion (per step, when labels are
// step IDs) and the count of those that held.
func printAssertions(w io.Writer, ch compare.Checked) {
	n := ch.Asserted()
	if n == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for i, rs := range ch.Results {
		for _, r := range rs {
			label := "assert " + r.Expr + ":"
			if ch.Labels[i] != "" {
				label = "assert " + ch.Labels[i] + " " + r.Expr + ":"
			}
			switch {
			case r.Skipped != "":
				fmt.Fprintf(tw, "%s\t\tskipped (%s)\n", label, r.Skipped)
			case r.Err != "":
				fmt.Fprintf(tw, "%s\t\tFAILED (%s)\n", label, r.Err)
			case r.Pass:
				fmt.Fprintf(tw, "%s\t%s\tok\n", label, r.MeasuredText)
			default:
				fmt.Fprintf(tw, "%s\t%s\tFAILED (not %s %s)\n", label, r.MeasuredText, r.Op, r.Bound)
			}
		}
	}
	tw.Flush()
	skip := ""
	if ch.Skipped > 0 {
		skip = fmt.Sprintf(", %d skipped", ch.Skipped)
	}
	if ch.Failed == 0 {
		fmt.Fprintf(w, "assertions: all %d held%s\n", ch.Held, skip)
		return
	}
	fmt.Fprintf(w, "assertions: %d of %d failed%s\n", ch.Failed, n-ch.Skipped, skip)
}
