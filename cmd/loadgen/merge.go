package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"loadgen/results/compare"
	"loadgen/results/merge"
	"loadgen/results/report"
	"loadgen/results/store"
)

func newMergeCmd() *cobra.Command {
	var out string
	var opts merge.Options
	cmd := &cobra.Command{
		Use:   "merge RUN.json RUN.json... -o ALL.json",
		Short: "Merge the runs of one load, recorded by several generators, exactly",
		Long: fmt.Sprintf(`Merge the results of one load that several generators shared (the workers of
'loadgen k8s run', or machines started by hand with 'loadgen run --json'): every
histogram is merged exactly, counts are summed, and the latency figures are
rebuilt, so the result is what one generator would have recorded. The merged
rate (RPS, bytes per second) is the sum of the runs' own rates, each over its
own measured window; the merged duration is their mean window. Each worker's
own generator cost is kept in the notes; the result is flagged saturated if
any worker was.

A sweep's step file (steps/*.json) counts as the run it holds. Runs of
different loads (another target, protocol, duration, closed vs open loop…)
are refused, as are runs of different request mixes (--targets: another
name, weight or host) and the same run given twice. A request mix's figures
by name and by host merge as the run's: counts added, latency from the
merged histograms. So are runs that were not
measured at the same time: every run must have measured at least %g%% of the
shortest run's window together with all the others (the span from the
latest start to the earliest end), or their rates would add up over times
they did not share. --allow-skew merges such runs anyway and says in the
output and the merged run's notes how skewed their windows were; runs whose
windows do not overlap at all are refused even so. Each worker's share of
connections, threads, rate and requests may differ. Input that cannot be
read exits %d, runs that do not merge %d.`, 100*merge.MinOverlap, compare.Usage, compare.Failed),
		Example: `  loadgen merge w0.json w1.json w2.json -o all.json
  loadgen report all.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o: say where to write the merged run")
			}
			if _, err := store.CheckOutputs(store.Output{Flag: "-o", Path: out}); err != nil {
				return err // before reading anything
			}
			// Input that cannot be read is a bad command line (exit status 2),
			// as for report and compare; runs that do not merge fail (1).
			in, err := merge.ReadFiles(args)
			if err != nil {
				return err
			}
			m, err := merge.Merge(in, opts)
			if err != nil {
				return failf("%v", err)
			}
			run := m.Run
			w := cmd.OutOrStdout()
			b, err := store.EncodeJSON(run)
			if err == nil {
				err = writeOutput(w, out, b)
			}
			if err != nil {
				return failf("-o: %v", err)
			}
			if store.IsStdout(out) {
				w = cmd.ErrOrStderr() // standard output holds the merged run
			}
			s := run.Summary
			fmt.Fprintf(w, "merged %d runs into %s: %d requests, %.1f req/s, p50 %s p99 %s p99.9 %s\n",
				len(m.Workers), out, s.Requests, s.RPS, report.Latency(s.Latency.P50), report.Latency(s.Latency.P99), report.Latency(s.Latency.P999))
			for _, n := range m.Warnings {
				fmt.Fprintf(w, "  warning: %s\n", n)
			}
			for _, wk := range m.Workers {
				sat := ""
				if wk.Generator.Saturated {
					sat = " SATURATED"
				}
				fmt.Fprintf(w, "  %-24s %8d requests %9.1f req/s  generator %.2f CPU-s (%.0f%%)%s\n",
					wk.Source, wk.Requests, wk.RPS, wk.Generator.CPUSeconds, 100*wk.Generator.Utilization, sat)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the merged run here, e.g. merged.json (required; JSON, as 'loadgen run --json'; - for stdout, the summary then goes to stderr)")
	cmd.Flags().BoolVar(&opts.AllowSkew, "allow-skew", false, fmt.Sprintf("merge runs whose measured windows overlap by less than %g%% of the shortest (their rates summed), saying by how much", 100*merge.MinOverlap))
	return cmd
}
