package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/report"
)

func runFindMax(ctx context.Context, r *sweep.Runner, slo sweep.SLO, expr string, stdout io.Writer, prog *sweepProgress) error {
	maxes, err := r.FindMax(ctx, slo)
	prog.finish()
	fmt.Fprintf(stdout, "\nhighest open-loop rate holding %s:\n", expr)
	if werr := findMaxTable(stdout, maxes, errors.Is(err, context.Canceled)); werr != nil {
		return failf("%v", werr)
	}
	fmt.Fprintf(stdout, "\nresults: %s (every probe is a step; summary in findmax.json)\n", r.Dir)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitError{code: 130}
		}
		return failf("%v", err)
	}
	var failed []string
	for _, m := range maxes {
		if m.Failed != "" {
			failed = append(failed, fmt.Sprintf("%s %s %s", m.Path, m.Rung, sweep.FormatSize(m.Payload)))
		}
	}
	if len(failed) > 0 {
		return failf("find-max: no run on %s (see the notes above)", strings.Join(failed, ", "))
	}
	return nil
}

// findMaxTable prints each search's bracket (findMaxBracket) as a table
// with its notes under it. interrupted: the search was stopped.
func findMaxTable(w io.Writer, maxes []sweep.Max, interrupted bool) error {
	fm := findMaxBracket(maxes, interrupted)
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

// findMaxBracket is each search's bracket: the highest rate that held the
// SLO and the lowest that missed it, each with the probes its verdict
// rests on ("2/3": two of three probes held); why the lowest failing rate
// failed goes in a note. interrupted: the search was stopped (a search
// with no failing rate did not reach its ceiling).
func findMaxBracket(maxes []sweep.Max, interrupted bool) report.FindMax {
	var fm report.FindMax
	for _, m := range maxes {
		rate, p99, held := "none", "—", "—"
		if v := m.Pass; v != nil {
			rate, held = fmt.Sprintf("%.0f", v.Rate), fmt.Sprintf("%d/%d", v.Passed, v.Probes)
			if d, err := time.ParseDuration(m.P99); err == nil {
				p99 = report.Latency(results.Duration(d)) // as the other tables print it
			}
		}
		fail, missed := "—", "—"
		what := fmt.Sprintf("%s %s %s", m.Path, m.Rung, sweep.FormatSize(m.Payload))
		switch v := m.Fail; {
		case m.Failed != "":
			if m.Pass == nil {
				rate = "failed"
			}
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s: failed: %s", what, oneLineErr(m.Failed)))
		case v != nil:
			fail, missed = fmt.Sprintf("%.0f", v.Rate), fmt.Sprintf("%d/%d", v.Probes-v.Passed, v.Probes)
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s at %.0f/s: %s", what, v.Rate, v.Why))
		case m.Pass != nil && interrupted:
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s: interrupted with %.0f/s held and no rate missed yet; --resume continues the search", what, m.Pass.Rate))
		case m.Pass != nil:
			fm.Notes = append(fm.Notes, what+": held up to the search's ceiling; the maximum is higher")
		default:
			fm.Notes = append(fm.Notes, what+": interrupted before any verdict")
		}
		if m.Saturated > 0 {
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s: the machine's CPUs were saturated during %d of the %d probes (every process, /proc/stat): "+
				"the verdicts may measure contention for CPU, other processes' included, not the path", what, m.Saturated, len(m.Probes)))
		}
		fm.Rows = append(fm.Rows, report.FindMaxRow{Payload: sweep.FormatSize(m.Payload), Step: m.Rung, Path: m.Path, Max: rate, P99: p99,
			Held: held, LowestFailing: fail, Missed: missed, Probes: fmt.Sprint(len(m.Probes))})
	}
	return fm
}

// findMaxSummaries reads, for each results directory of a find-max
// search (its findmax.json), the bracket the search found, as the sweep
// printed it: the report shows it before the per-rate tables of its
// probes.
func findMaxSummaries(sweeps []*report.Sweep) ([]report.FindMax, error) {
	var out []report.FindMax
	for _, s := range sweeps {
		if s.Manifest == nil {
			continue
		}
		file := filepath.Join(s.Name, "findmax.json")
		b, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var maxes []sweep.Max
		if err := json.Unmarshal(b, &maxes); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		fm := findMaxBracket(maxes, false)
		fm.Dir = s.Name
		out = append(out, fm)
	}
	return out, nil
}
