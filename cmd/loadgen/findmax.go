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

// findMaxTable prints each search's bracket: the highest rate that held
// the SLO and the lowest that missed it, each with the probes its verdict
// rests on ("2/3": two of three probes held); why the lowest failing rate
// failed goes in a note under the table. interrupted: the search was
// stopped (a search with no failing rate did not reach its ceiling).
func findMaxTable(w io.Writer, maxes []sweep.Max, interrupted bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "payload\tstep\tpath\tmax req/s\tp99 at max\theld\tlowest failing\tmissed\tprobes\t\n")
	var notes []string
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
			notes = append(notes, fmt.Sprintf("%s: failed: %s", what, oneLineErr(m.Failed)))
		case v != nil:
			fail, missed = fmt.Sprintf("%.0f", v.Rate), fmt.Sprintf("%d/%d", v.Probes-v.Passed, v.Probes)
			notes = append(notes, fmt.Sprintf("%s at %.0f/s: %s", what, v.Rate, v.Why))
		case m.Pass != nil && interrupted:
			notes = append(notes, fmt.Sprintf("%s: interrupted with %.0f/s held and no rate missed yet; --resume continues the search", what, m.Pass.Rate))
		case m.Pass != nil:
			notes = append(notes, what+": held up to the search's ceiling; the maximum is higher")
		default:
			notes = append(notes, what+": interrupted before any verdict")
		}
		if m.Saturated > 0 {
			notes = append(notes, fmt.Sprintf("%s: the machine's CPUs were saturated during %d of the %d probes (every process, /proc/stat): "+
				"the verdicts may measure contention for CPU, other processes' included, not the path", what, m.Saturated, len(m.Probes)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", sweep.FormatSize(m.Payload), m.Rung, m.Path, rate, p99, held, fail, missed, len(m.Probes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "held, missed: probes of that rate that held or missed the SLO (a miss is probed again before it is believed)")
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	return nil
}

// findMaxSummaries writes, for each results directory of a find-max search
// (its findmax.json), the bracket the search found, as the sweep printed
// it: the per-rate tables that follow are its probes.
func findMaxSummaries(w io.Writer, sweeps []*report.Sweep) error {
	for _, s := range sweeps {
		if s.Manifest == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.Name, "findmax.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		var maxes []sweep.Max
		if err := json.Unmarshal(b, &maxes); err != nil {
			return fmt.Errorf("%s: %v", filepath.Join(s.Name, "findmax.json"), err)
		}
		fmt.Fprintf(w, "## %s: the highest open-loop rate holding the SLO\n\nEach probe is a step of the tables below.\n\n```\n", s.Name)
		if err := findMaxTable(w, maxes, false); err != nil {
			return err
		}
		fmt.Fprint(w, "```\n\n")
	}
	return nil
}
