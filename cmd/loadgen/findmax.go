package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/report"
	"loadgen/results/store"
)

func runFindMax(ctx context.Context, r *sweep.Runner, slo sweep.SLO, expr string, stdout io.Writer, prog *sweepProgress) error {
	r.SLO = expr
	maxes, err := r.FindMax(ctx, slo)
	prog.finish()
	fmt.Fprintf(stdout, "\nhighest open-loop rate holding %s:\n", expr)
	if werr := findMaxTable(stdout, maxes, errors.Is(err, context.Canceled), results.SchemaVersion); werr != nil {
		return failf("%v", werr)
	}
	fmt.Fprintf(stdout, "\n%s\n", store.ResultsLine(r.Dir, "every probe is a step", "summary in "+sweep.FindMaxFileName))
	code, err := compare.SweepOutcome(err, sweep.FailedSearches(maxes), errors.Is(err, context.Canceled), compare.OK)
	if err != nil {
		return failf("%v", err)
	}
	return exitWith(code)
}

// findMaxTable prints each search's bracket (sweep.Bracket) as a table
// with its notes under it. interrupted: the search was stopped; schema:
// of the findmax.json the searches come from.
func findMaxTable(w io.Writer, maxes []sweep.Max, interrupted bool, schema int) error {
	fm := sweep.Bracket(maxes, interrupted, schema)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(report.FindMaxColumns, "\t"))
	for _, r := range fm.Rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(r.Cells(), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, report.FindMaxLegend)
	for _, n := range fm.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	return nil
}

// findMaxPlan prints what --find-max will do (--dry-run): its searches,
// in the order they run, each with its first probe, and the rules every
// search follows.
func findMaxPlan(w io.Writer, spec *sweep.Spec, slo string) error {
	plan := spec.FindMaxPlan()
	fmt.Fprintf(w, "find-max plan: %d searches of the highest open-loop rate holding %s, one per path × ladder step × payload:\n", len(plan.Searches), slo)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tsearch\tfirst probe\turl\t\n")
	for i, s := range plan.Searches {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", i+1, s.Label(), s.First.ID(), pathWhere(spec, s.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	searchLo, searchHi := plan.SearchTime()
	allLo, allHi := plan.TotalTime()
	fmt.Fprintf(w, `each search:
  climbs from %.0f/s, doubling while the rate holds (halving while none has), up to %.0f/s, until the maximum is bracketed;
  a miss is probed again: a rate fails on %d misses; one that held once is believed while the search explores;
  bisects the bracket to within %.0f%% (at most %d times in a row), judges the lowest failing rate again,
  and confirms the highest rate that held: only a rate held in %d of at most %d probes is reported;
  flags each probe during which loadgen (G) or the whole machine (M) was CPU-saturated: the search then measures contention.
a probe runs %s (%s warm-up, %s measured); how many a search makes depends on what they measure:
  typically %d–%d, about %s–%s a search, %s–%s for all %d.
`, plan.Start, plan.Ceiling, plan.Agree,
		100*plan.Close, plan.Bisections, plan.Agree, plan.Confirmations,
		plan.PerProbe, spec.Warmup.D(), spec.Duration.D(),
		plan.ProbesLo, plan.ProbesHi, searchLo, searchHi, allLo, allHi, len(plan.Searches))
	return nil
}
