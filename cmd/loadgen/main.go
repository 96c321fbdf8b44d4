// Command loadgen is a load generator for the network paths of Kubernetes:
// closed- and open-loop HTTP/1.1, HTTP/2, gRPC and raw TCP load, the targets
// to aim it at, sweeps across paths, and reports.
//
// This package only turns flags into typed configurations and signals into
// a context; the work is done by the packages it calls.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the run failed, or an assertion did not hold
	exitUsage = 2 // the command line was wrong
)

// runFailure marks an error of a run, not of the command line: exit status
// 1. Every other error a command returns is a usage error (exit status 2):
// cobra's own (unknown flag or command) and those of flag validation.
type runFailure struct{ err error }

func (f runFailure) Error() string { return f.err.Error() }
func (f runFailure) Unwrap() error { return f.err }

func failf(format string, a ...any) error { return runFailure{fmt.Errorf(format, a...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs the command line and returns the exit status.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var fail exitError
	if errors.As(err, &fail) {
		return fail.code
	}
	fmt.Fprintf(stderr, "loadgen: %v\n", err)
	var rf runFailure
	if errors.As(err, &rf) {
		return exitFail
	}
	if cmd, _, ferr := root.Find(args); ferr == nil && cmd != nil && cmd != root {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	} else {
		fmt.Fprintln(stderr, "Run 'loadgen --help' for usage.")
	}
	return exitUsage
}

// exitError ends a command with a status after it has said why itself.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "loadgen",
		Short: "Load generator for the network paths of Kubernetes",
		Long: `loadgen drives HTTP/1.1, HTTP/2, gRPC and raw TCP load, closed loop like wrk or
open loop like wrk2 (coordinated-omission corrected), against targets it can
start itself, and reports latency to p99.99, errors and its own CPU cost.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCmd(), newSweepCmd(), newReportCmd(), newCompareCmd(), newSizeCmd(), newLabCmd(), newServeCmd(), newVersionCmd())
	root.AddCommand(newMergeCmd(), newK8sCmd())
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}
