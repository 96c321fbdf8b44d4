package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"loadgen/results/merge"
	"loadgen/results/store"
)

func newMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge RUN.json RUN.json... -o ALL.json",
		Short: "Merge the runs of one load, recorded by several generators, exactly",
		Long: `Merge the results of one load that several generators shared (the workers of
'loadgen k8s run', or machines started by hand with 'loadgen run --json'): every
histogram is merged exactly, counts are summed, and the latency figures and
RPS are rebuilt over the union of the measured windows, so the result is what
one generator would have recorded. Each worker's own generator cost is kept in
the notes; the result is flagged saturated if any worker was.

Runs of different loads (another target, protocol, duration…) are refused;
each worker's share of connections, threads, rate and requests may differ.`,
		Example: `  loadgen merge w0.json w1.json w2.json -o all.json
  loadgen report all.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o: say where to write the merged run")
			}
			var in []merge.Input
			for _, path := range args {
				b, err := os.ReadFile(path)
				if err != nil {
					return failf("%v", err)
				}
				x, err := merge.Decode(path, b)
				if err != nil {
					return failf("%v", err)
				}
				in = append(in, x)
			}
			run, workers, err := merge.Runs(in)
			if err != nil {
				return failf("%v", err)
			}
			if err := store.WriteRun(out, run); err != nil {
				return failf("-o: %v", err)
			}
			w := cmd.OutOrStdout()
			s := run.Summary
			fmt.Fprintf(w, "merged %d runs into %s: %d requests, %.1f req/s, p50 %v p99 %v p99.9 %v\n",
				len(workers), out, s.Requests, s.RPS, s.Latency.P50, s.Latency.P99, s.Latency.P999)
			for _, wk := range workers {
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
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the merged run here (JSON, as 'loadgen run --json')")
	return cmd
}
