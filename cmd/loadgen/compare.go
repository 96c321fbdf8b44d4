package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"loadgen/results/compare"
)

type compareFlags struct {
	maxRegression  string
	noise          string
	judgeContended bool
	allowContended bool
}

func newCompareCmd() *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare [flags] A B",
		Short: "Compare two runs or two sweeps, telling real changes from noise",
		Long: fmt.Sprintf(`Compare B with A: two run files (loadgen run --json) or two sweep results
directories (loadgen sweep -o), step by step. For each step, RPS (requests
answered without error per second: a B failing fast is not faster), the
share of requests that failed (errors), latency p50, p90, p95, p99 and p99.9, and
for each set of processes a sweep watched, its
CPU cores per 1000 requests/s (cpu/1k.NAME: a B that serves fewer requests is
not cheaper for it) and its memory (MiB.NAME): the ratio B/A of the medians
over repeats, its interval over the repeats, and a verdict.

With repeats on both sides (loadgen sweep --repeats 3), the interval is a
distribution-free confidence interval of B/A: of the pairwise ratios of B's
repeats to A's, from the smallest to the largest (90%% confidence with three
repeats a side; with more, the narrowest that keeps 95%%). The verdict is
judged by the whole interval:

  REGRESSION    the whole interval is worse than --max-regression (RPS down,
                latency, CPU per request or memory up); errors up by more than
                0.1 percentage point over the whole interval of B−A; or a step
                that ran in A and failed in B, or in which no request of B
                succeeded
  within noise  the interval spans --max-regression: the repeats cannot tell
  worse         the whole interval is worse than --noise, short of the limit
  holds         the interval is short of the limit, and not wholly past --noise
  better        the whole interval is better than --noise

With one repeat a side (two runs, or sweeps without --repeats) there is no
interval and noise cannot be told from a change: the verdicts are points,
marked (point): B within --noise of A is "same", else better, worse or
REGRESSION by the ratio of the medians, and a REGRESSION (point) fails as
one.

A step whose machine's CPUs (M) or generator's (G) were saturated measured
contention for CPU beside the path. Contention in B can explain so much of a
change and no more: requests/s down to A's / F and latency up to F × A's plus
the send lag, where F comes from what B measured (the share of the machine's
CPUs other work took beyond A's: work left a share 1 − L of the CPU takes up to
1/(1 − L) as long; a saturated generator's CPU per request over A's) and the
send lag is under 1 ms, or the run's max lag where enough sends were late. A
change past that margin (and --max-regression) is a REGRESSION whatever the
flags; one past --max-regression but within it is "contended": not decidable,
exit status %d unless --allow-contended. --judge-contended judges contended
figures without the margin.

Sweep steps match by path, rung, payload and rate. Directories that hold
sweeps (loadgen lab's, one per protocol) compare sweep by sweep, by name. Exit
status %d when a figure regressed, %d when contention leaves a change not
decidable, %d when A or B cannot be read.`, compare.Undecided, compare.Breached, compare.Undecided, compare.Usage),
		Example: `  loadgen compare before.json after.json
  loadgen compare results/before results/after --max-regression 5%
  loadgen compare results/nginx-1.24 results/nginx-1.26 --noise 10%`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("compare takes two results, A and B (run JSON files or sweep directories), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.maxRegression, "max-regression", compare.FormatPercent(compare.DefaultMaxRegression), fmt.Sprintf("how much worse a real change may be before it is a regression (exit status %d)", compare.Breached))
	fl.StringVar(&f.noise, "noise", compare.FormatPercent(compare.DefaultNoise), "changes within this band are never real: not worse, better or a regression")
	fl.BoolVar(&f.allowContended, "allow-contended", false, fmt.Sprintf("exit %d, not %d, when the only doubt is contention: figures worse than --max-regression but within what a saturated machine (M) or generator (G) in B can explain", compare.OK, compare.Undecided))
	fl.BoolVar(&f.judgeContended, "judge-contended", false, "judge the figures of saturated steps (M, G) as the others, without the margin contention could explain")
	return cmd
}

func (f *compareFlags) options() (compare.Options, error) {
	opt, err := compare.ParseOptions(f.maxRegression, f.noise)
	opt.JudgeContended, opt.AllowContended = f.judgeContended, f.allowContended
	return opt, err
}

func runCompare(cmd *cobra.Command, f *compareFlags, a, b string) error {
	opt, err := f.options()
	if err != nil {
		return err
	}
	res, err := compare.Paths(a, b, opt)
	out := cmd.OutOrStdout()
	// Directories of sweeps: sweep by sweep, those compared before an
	// error too, then the verdict over them all.
	for _, s := range res.Subs {
		if s.Missing {
			fmt.Fprintf(out, "== %s: not in %s, skipped\n\n", s.Name, b)
			continue
		}
		fmt.Fprintf(out, "== %s\n", s.Name)
		if err := compare.WriteText(out, s.C); err != nil {
			return failf("%v", err)
		}
		fmt.Fprintln(out)
	}
	if err != nil {
		return err
	}
	if res.Subs == nil { // two runs or two sweeps
		if err := compare.WriteText(out, res.C); err != nil {
			return failf("%v", err)
		}
	}
	return regressionFailure(res.C)
}

// regressionFailure is the error of a comparison that found regressions
// (exit status 99), or figures contention leaves undecided (98).
func regressionFailure(c compare.Comparison) error {
	msg := c.Failure()
	if msg == "" {
		return nil
	}
	return runFailure{err: errors.New(msg), code: c.Exit()}
}
