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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/loadgen"
	"loadgen/results/compare"
	"loadgen/results/report"
)

// Exit statuses: compare.Exit holds the table, with what each means.
const (
	exitOK          = int(compare.OK)          // all good
	exitFail        = int(compare.Failed)      // the run failed
	exitUsage       = int(compare.Usage)       // the command line was wrong
	exitUndecided   = int(compare.Undecided)   // contention leaves a change undecided
	exitBreached    = int(compare.Breached)    // an assertion did not hold, or a regression
	exitAborted     = int(compare.Aborted)     // --abort-on-fail stopped the run
	exitInterrupted = int(compare.Interrupted) // Ctrl-C
	exitTerminated  = int(compare.Terminated)  // SIGTERM
)

// exitHelp is the exit status table of every command that runs load or
// judges results (compare.ExitTable), as their help says it: run's prints
// it whole, the others name the statuses they come to and point to it
// (exitHelpRef). Go readers find the table at compare.Exit.
var exitHelp = exitTable(compare.ExitTable())

// exitTable lays the rows out as help text: one status a line, its
// words wrapped under themselves within 79 columns, the signals' on one
// line ("130  Ctrl-C; 143 SIGTERM").
func exitTable(rows []compare.ExitRow) string {
	const code = "  %-4d " // the codes' column
	indent := strings.Repeat(" ", len(fmt.Sprintf(code, 0)))
	var b strings.Builder
	b.WriteString("Exit status, of every command that runs load or judges results:")
	for _, r := range rows {
		if r.Code == compare.Terminated {
			fmt.Fprintf(&b, "; %d %s", int(r.Code), r.Help)
			continue
		}
		help := strings.TrimSuffix(report.Wrap(r.Help, 79-len(indent), ""), "\n")
		fmt.Fprintf(&b, "\n"+code+"%s", int(r.Code), strings.ReplaceAll(help, "\n", "\n"+indent))
	}
	return b.String()
}

// exitHelpRef is how the help of a command that names only some exit
// statuses points to exitHelp, which run --help prints.
const exitHelpRef = "(the table: loadgen run --help)"

// exitWith ends a command with the check's status, when it is not OK.
func exitWith(code compare.Exit) error {
	if code == compare.OK {
		return nil
	}
	return exitError{code: int(code)}
}

// runFailure marks an error of a run, not of the command line: exit status
// 1, or code when set (99: a regression compare found). Every other error a
// command returns is a usage error (exit status 2): cobra's own (unknown
// flag or command) and those of flag validation.
type runFailure struct {
	err  error
	code compare.Exit
}

func (f runFailure) Error() string { return f.err.Error() }
func (f runFailure) Unwrap() error { return f.err }

func failf(format string, a ...any) error { return runFailure{err: fmt.Errorf(format, a...)} }

func main() {
	ctx, stop := interruptContext()
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code == exitInterrupted && terminated.Load() {
		code = exitTerminated // 128 + SIGTERM, as a shell reports it: a stop, not Ctrl-C
	}
	os.Exit(code)
}

// terminated is set when the signal that stopped the command was SIGTERM.
var terminated atomic.Bool

// interruptContext is cancelled by the first Ctrl-C (SIGINT) or SIGTERM, so
// that a command stops and prints and writes what it measured. A second
// one exits at once with status 130, whatever the command still waits for
// (signal.NotifyContext would swallow it, leaving no way out but kill -9).
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		terminated.Store(sig == syscall.SIGTERM)
		cancel()
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(os.Stderr, "\nloadgen: interrupted again: exiting now")
		os.Exit(exitInterrupted)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs) // no signal is sent on it after Stop: ends the goroutine
		cancel()
	}
}

// execute runs the command line and returns the exit status.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = serialised(stdout), serialised(stderr)
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
		if rf.code != compare.OK {
			return int(rf.code)
		}
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

// exitStatus is the exit status err carries, if any: a lab's sweep's
// (lab.RunSweeps), a command's on the dashboard (live.Outcome).
func exitStatus(err error) (compare.Exit, bool) {
	var ee exitError
	if errors.As(err, &ee) {
		return compare.Exit(ee.code), true
	}
	return 0, false
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "loadgen",
		Short: "Load generator for the network paths of Kubernetes",
		Long: `loadgen drives HTTP/1.1, HTTP/2, HTTP/3, gRPC, raw TCP and UDP load, closed
loop like wrk or open loop like wrk2 (coordinated-omission corrected),
against targets it can start itself, and reports latency to p99.99, errors
and its own CPU cost. Its three uses: comparing meshes and paths (sweep,
k8s run), sizing an ingress (size), and gating CI (run --assert,
--baseline).`,
		Example: `  loadgen serve httpbin --addr 127.0.0.1:8080 &
  loadgen run -c 50 -d 10s --latency http://127.0.0.1:8080/get
  loadgen run -R 2000 -d 30s --assert 'p99<20ms' --junit junit.xml http://127.0.0.1:8080/get
  loadgen sweep                       # the built-in demo: httpbin direct vs through a real nginx
  loadgen size --workers 1,2,4 -o results/sizing
  loadgen k8s run --mesh istio -f examples/k8s-sweep.yaml --workers 4 -o results/istio`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// LOADGEN_<FLAG> variables fill the flags the command line did not
	// give, before a command reads its -f: flag > environment > file.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return applyEnv(cmd, os.LookupEnv) }
	root.AddCommand(newRunCmd(), newSweepCmd(), newReportCmd(), newCompareCmd(), newSizeCmd(), newLabCmd(), newMeshCmd(), newServeCmd(), newVersionCmd())
	root.AddCommand(newStudyCmd(), newMergeCmd(), newK8sCmd(), newCleanupCmd())
	// --version and -v, as users of other tools type them.
	root.Version = loadgen.Version()
	root.SetVersionTemplate(versionLine())
	// loadgen completion bash|zsh|fish|powershell: cobra's scripts.
	root.InitDefaultCompletionCmd()
	strictGroups(root)
	registerCompletions(root)
	root.SetUsageTemplate(usageTemplate)
	return root
}

// Help fits maxWidth columns: the flags' text wraps under its column.
// cobra keeps template functions in a global map, so they are added once
// here, not by each newRoot (tests run commands side by side: a race).
func init() {
	cobra.AddTemplateFunc("wrapFlags", func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(maxWidth) })
}

// usageTemplate is cobra's, with the flags wrapped at maxWidth columns.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{wrapFlags .LocalFlags | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{wrapFlags .InheritedFlags | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// strictGroups makes every command that only groups others (loadgen serve)
// print its help when called alone and refuse an unknown subcommand as a
// usage error (exit status 2), where cobra would print help and exit 0.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				var names []string
				for _, sub := range cmd.Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				return fmt.Errorf("unknown command %q for %q: use one of %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
}

// serialised is w, its writes serialised unless it is a file: a child
// process (a target the sweep starts) writes to a file itself, but into
// any other writer through a goroutine of os/exec, beside the command's
// own writes.
func serialised(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
