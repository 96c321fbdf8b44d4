package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"loadgen/meshes/leftover"
)

func newCleanupCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "cleanup [--dry-run]",
		Short: "Remove what killed loadgen runs left behind: network namespaces, temporary directories",
		Long: `Remove what loadgen runs that were killed (kill -9, a crash) could not clean
up themselves, and print what was removed:

  network namespaces   lgPID… (a lab's nodes and pods, a sidecar sweep's pods,
                       with the veths, iptables rules and BPF programs in
                       them) and lgtPID… (loadgen's tests')
  temporary directories  $TMPDIR/loadgen-WHAT-PID-… (a proxy's configuration
                       and logs, a sizing's or mTLS run's certificates)

Every one is named after the process that made it; it is removed only when
that process is gone: no process of that pid, or one that is not loadgen (a
pid reused by another program, or started after the leftover was made).
Those of loadgen runs still going are left alone. A sweep, lab or size
removes them too as it starts, and says so in a line. Deleting a namespace
needs root. For a cluster, see loadgen k8s cleanup.`,
		Example: `  sudo loadgen cleanup --dry-run
  sudo loadgen cleanup`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCleanup(cmd, dryRun) },
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, and remove nothing")
	return cmd
}

// runCleanup is loadgen cleanup (and lab --cleanup): every leftover of a
// dead run, each on its line, then a line of what it came to. Exit
// status 1 if one could not be removed.
func runCleanup(cmd *cobra.Command, dryRun bool) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), leftover.CleanupTimeout)
	defer cancel()
	stdout := cmd.OutOrStdout()
	items, err := leftover.Find()
	if err != nil {
		return failf("cleanup: %v", oneLineError(err))
	}
	if len(items) == 0 {
		fmt.Fprintln(stdout, "nothing to remove: no leftovers of killed loadgen runs")
		return nil
	}
	var removed []leftover.Item
	var failures []string
	leftover.RemoveItems(ctx, items, dryRun, func(o leftover.Outcome) {
		switch o.Fate {
		case leftover.WouldRemove:
			fmt.Fprintf(stdout, "would remove %s (%s)\n", o.Item, o.Why)
			removed = append(removed, o.Item)
		case leftover.NeedsRoot:
			fmt.Fprintf(stdout, "left %s (%s): %v\n", o.Item, o.Why, o.Err)
			failures = append(failures, o.Name+": needs root (sudo loadgen cleanup)")
		case leftover.Failed:
			fmt.Fprintf(stdout, "could not remove %s: %v\n", o.Item, oneLineError(o.Err))
			failures = append(failures, oneLineError(o.Err))
		default:
			fmt.Fprintf(stdout, "removed %s (%s)\n", o.Item, o.Why)
			removed = append(removed, o.Item)
		}
	})
	switch {
	case dryRun:
		fmt.Fprintf(stdout, "would remove %s; dry run: nothing was removed\n", leftover.Summary(removed))
	case len(removed) > 0:
		fmt.Fprintf(stdout, "removed %s\n", leftover.Summary(removed))
	}
	if len(failures) > 0 {
		return failf("cleanup: %d left: %s", len(failures), strings.Join(failures, "; "))
	}
	return nil
}

// cleanLeftovers removes, as a sweep, lab or size starts, what killed
// loadgen runs left (namespaces only as root), and says so on stderr in
// one line.
func cleanLeftovers(ctx context.Context, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, leftover.StartTimeout)
	defer cancel()
	removed, err := leftover.Clean(ctx, nil)
	if len(removed) > 0 {
		fmt.Fprintf(stderr, "loadgen: removed %s\n", leftover.Summary(removed))
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgen: some leftovers of killed runs could not be removed (%s): see loadgen cleanup\n", oneLineError(err))
	}
}

// oneLineError is err's text on one line (errors.Join puts each on its
// own).
func oneLineError(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}
