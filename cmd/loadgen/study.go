package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"loadgen/internal/shellquote"
	"loadgen/loadgen/study"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/paths"
	"loadgen/meshes/nginxingress"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/report"
	"loadgen/results/store"
)

type studyFlags struct {
	out      string
	resume   bool
	duration time.Duration
	dryRun   bool
	quiet    bool
	asserts  []string
	junit    string
	cpuPrice float64
	cpus     int
	cluster  study.Options // mesh-ladder on a cluster: kubeconfig, context, meshes, workers
	images   []string      // --proxy-image PROXY=IMAGE
	labels   results.Labels
	// allowContended makes the exit 0, not 98, when an ordering is not
	// decidable for contention alone.
	allowContended bool
}

// studyExitHelp is what a study's statuses mean (study.Exit, compare.Fold),
// as its help says it, the statuses compare.Exit's.
var studyExitHelp = fmt.Sprintf(`Exit status: %d every step ran and every ordering was decidable; %d a step
failed; %d usage; %d an ordering was not decidable for contention alone
(--allow-contended: %d); %d a check (--assert) did not hold; %d a step
was stopped by --abort-on-fail; %d/%d interrupted
%s.`, compare.OK, compare.Failed, compare.Usage, compare.Undecided, compare.OK, compare.Breached, compare.Aborted,
	compare.Interrupted, compare.Terminated, exitHelpRef)

func newStudyCmd() *cobra.Command {
	f := &studyFlags{}
	cmd := &cobra.Command{
		Use:   "study list | NAME [-o DIR] [--resume] [--dry-run]",
		Short: "Rerun a published benchmark study, our figures beside the published ones",
		Long: `Rerun one of the published studies loadgen was built from, as a fixed plan
over loadgen's own commands (lab, size, sweep), into one results directory,
and print the study's table: where its figures were published, the
published figure and ours for each row (with the range over repeats),
both as a ratio to the study's own baseline row (and, where a row's mode
measured the baseline's path itself, as each CNI's run on a cluster does,
to that: runs made apart drift with their own), and what each ordering
the study concluded comes to here: holds, reversed or within noise (by
the repeats' ranges), noise cannot be told (one repeat), or not
distinguishable here (one datapath on this machine).

Absolute figures from a study's testbed (10 GbE, bare metal) are not
comparable with one machine's network namespaces; ratios and orderings are.

  loadgen study list                 the studies and what each needs
  loadgen study NAME --dry-run       the plan: the loadgen commands it runs

A study that needs root, nginx or a cluster says so before building anything.
Ctrl-C keeps finished steps and prints the command that resumes the study.
An ordering whose runs measured contention for CPU (a saturated machine, M,
or generator, G) that can explain the figures is not decidable (contended)
instead of holds or reversed: contention can stretch a latency or lower a
rate by the factor loadgen compare derives from the runs, and the ordering
stands only when the rows' ranges stay apart with that margin.

` + studyExitHelp,
		Example: `  loadgen study list
  sudo loadgen study flannel-backends -d 5s -o results/flannel
  sudo loadgen study cni-matrix -o results/cni --resume
  loadgen study nginx-sizing --cpu-price 25 -d 30s
  loadgen study k8s-paths --kubeconfig ~/.kube/config -d 10s --repeats 3 --tolerance 10%
  # on a cluster running Flannel: the backend its nodes run; switch it, --resume for the next
  loadgen study flannel-backends --kubeconfig ~/.kube/config -o results/flannel --resume
  loadgen report results/cni --html cni.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runStudy(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVarP(&f.out, "out", "o", "", store.OutHelp("study-NAME"))
	fl.BoolVar(&f.resume, "resume", false, "continue the study in -o, skipping finished steps")
	fl.DurationVarP(&f.duration, "duration", "d", 0, "measured duration of each step, e.g. 20s (default the study's own)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan (the loadgen commands) without running anything")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	fl.StringArrayVar(&f.asserts, "assert", nil, "an assertion on every step, e.g. 'p99<20ms', as loadgen sweep --assert (repeatable)")
	fl.StringVar(&f.junit, "junit", "", "write each step's assertions as JUnit XML: e.g. junit.xml makes junit-STEP-PROTOCOL.xml …")
	fl.Float64Var(&f.cpuPrice, "cpu-price", 0, "nginx-sizing: what one CPU costs a month, e.g. 30 (any currency), for the cost columns")
	fl.IntVar(&f.cpus, "cpus", runtime.NumCPU(), "nginx-sizing: the most worker_processes to size")
	fl.Lookup("cpus").DefValue = "this machine's CPUs" // said, not counted: the reference is the same on every machine
	fl.StringVar(&f.cluster.Kubeconfig, "kubeconfig", "", "mesh-ladder: run on this cluster (loadgen k8s run) instead of local sidecars; flannel-backends: on this cluster's Flannel (loadgen k8s paths per backend) instead of the lab; cni-matrix: on this cluster's CNI (loadgen k8s paths, named by --cni); k8s-paths: its cluster (default $KUBECONFIG)")
	fl.StringVar(&f.cluster.Context, "context", "", "mesh-ladder, k8s-paths: the kubeconfig context (default the current one; implies the cluster)")
	fl.StringSliceVar(&f.cluster.Meshes, "meshes", nil, "mesh-ladder on a cluster: the meshes, each a k8s run (default istio): "+strings.Join(k8s.Meshes, ", "))
	fl.IntVar(&f.cluster.Workers, "workers", 1, "mesh-ladder on a cluster: worker pods per step")
	fl.StringArrayVar(&f.images, "proxy-image", nil, "mesh-ladder with --meshes sidecar: a proxy's image, PROXY=IMAGE (repeatable; default each proxy's official image)")
	fl.BoolVar(&f.cluster.SameNodeOK, "same-node-ok", false, "mesh-ladder on a cluster: let workers share the target's node (a one-node cluster; k8s run's --same-node-ok)")
	fl.StringVar(&f.cluster.Prometheus, "prometheus", "", "mesh-ladder on a cluster: read the proxies' CPU and memory from this Prometheus (k8s run's --prometheus; default metrics.k8s.io, which needs steps of 30s or more)")
	fl.StringVar(&f.cluster.Ladder, "ladder", "", "mesh-ladder: the ladder, e.g. c1t1,c8t8 (sweep's --ladder; default the study's "+study.StudyLadder+", as the machine allows)")
	fl.StringVar(&f.cluster.Payloads, "payloads", "", "mesh-ladder: the payloads, e.g. 100,1KiB (sweep's --payloads; default the study's "+study.StudyPayloads+", on a cluster "+study.ClusterPayloads+")")
	fl.StringVar(&f.cluster.Image, "image", "", "on a cluster: the loadgen image (k8s run's and k8s paths' --image; default "+k8s.DefaultImage+")")
	fl.IntVar(&f.cluster.Repeats, "repeats", 0, "samples of every step (default the study's own: loadgen study list); with one, an ordering's noise cannot be told")
	fl.StringVar(&f.cluster.CNI, "cni", "", "cni-matrix on a cluster: its datapath, named as the lab's modes (macvlan, vxlan, host-gw, ebpf…; default its Flannel backend): its rows are that mode's; run once per CNI with --resume into one -o")
	fl.StringVar(&f.cluster.Tolerance, "tolerance", compare.FormatPercent(paths.DefaultTolerance), "k8s-paths: how far below hostNetwork a pod path may fall (k8s-netperf's --tcp-tolerance)")
	labelFlag(fl, &f.labels)
	fl.BoolVar(&f.allowContended, "allow-contended", false, fmt.Sprintf("exit %d, not %d, when the only doubt is contention: an ordering the runs' saturated machine (M) or generator (G) can explain is not decidable (contended), and still printed so", compare.OK, compare.Undecided))
	return cmd
}

func runStudy(cmd *cobra.Command, f *studyFlags, name string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if name == "list" {
		return listStudies(stdout)
	}
	s, err := study.Lookup(name)
	if err != nil {
		return err
	}
	opts := f.cluster
	opts.Duration, opts.CPUs = f.duration, f.cpus
	if err := opts.CheckBounds(); err != nil {
		return err
	}
	if f.out, err = store.OutDir(f.out, "study-"+s.Name, f.resume, "study", time.Now()); err != nil {
		return err // before anything starts
	}
	if store.IsStdout(f.junit) {
		return compare.JUnitNotStdout(f.junit, "the study writes a JUnit file per step (FILE-STEP-PROTOCOL.xml)")
	}
	if opts.ProxyImages, err = study.ParseProxyImages(f.images); err != nil {
		return err
	}
	g := study.Given{Changed: cmd.Flags().Changed, Checks: len(f.asserts) > 0 || f.junit != "", Meshes: k8s.Meshes}
	if err := s.CheckOptions(opts, g); err != nil {
		return err
	}
	plan := s.Plan(opts)
	if !f.dryRun {
		if err := study.CheckOut(f.out, f.resume); err != nil {
			return err
		}
	}
	if f.dryRun {
		fmt.Fprintf(stdout, "study %s: %s\nneeds: %s\nrepeats: %d\nmethod: %s\n", s.Name, s.Title, s.NeedsTextFor(opts), s.RepeatsFor(opts), s.Method)
		if s.Later != "" {
			fmt.Fprintf(stdout, "not yet: %s\n", s.Later)
		}
		if err := printSources(stdout, s); err != nil {
			return err
		}
		for i, st := range plan {
			fmt.Fprintf(stdout, "%d. %s\n   loadgen %s\n", i+1, st.Name, strings.Join(quoteAll(f.stepArgs(st, false)), " "))
			for _, name := range slices.Sorted(maps.Keys(st.Files)) {
				fmt.Fprintf(stdout, "   %s:\n%s", filepath.Join(f.out, name), indent(st.Files[name], "     "))
			}
		}
		return nil
	}
	if err := study.CheckNeeds(s.NeedsFor(opts), s.Name, nginxFound); err != nil {
		return failf("study %s %v", s.Name, err)
	}
	if s.Later != "" {
		fmt.Fprintf(stderr, "study %s: not yet: %s\n", s.Name, s.Later)
	}
	if err := study.WriteMarker(f.out, s.Name); err != nil {
		return failf("study %s: %v", s.Name, err)
	}
	resume := sweep.ResumeCommand("study "+s.Name, resumeFlags(cmd), f.out)
	r := study.Runner{Study: s.Name, Out: f.out, Resume: f.resume, Progress: stdout,
		Args: func(st study.Step) []string { return f.stepArgs(st, true) },
		RunStep: func(ctx context.Context, args []string) compare.Exit {
			return compare.Exit(execute(ctx, args, stdout, stderr))
		}}
	ran, err := r.RunPlan(cmd.Context(), plan)
	if err != nil {
		return failf("study %s: %v", s.Name, err)
	}
	if ran.Interrupted {
		fmt.Fprintln(stderr, compare.InterruptedLine(store.ContinueWith("the study's", resume)))
		return exitError{code: exitInterrupted}
	}
	contended, err := printStudy(stdout, s, f)
	if err != nil {
		return failf("study %s: %v", s.Name, err)
	}
	fmt.Fprintf(stdout, "\n%s\n", store.ResultsLine(f.out, store.ReadWith(f.out)))
	worst, line := compare.FoldSteps(nil, ran.Failed, len(plan), ran.Codes...)
	if line != "" {
		fmt.Fprintf(stdout, "study %s: %s\n", s.Name, line)
	}
	return exitWith(studyExit(worst, contended, f.allowContended, stderr))
}

// studyExit is the study's exit status (study.Exit), and says on stderr
// what it made of the orderings not decidable for contention.
func studyExit(worst compare.Exit, contended []string, allowContended bool, stderr io.Writer) compare.Exit {
	code, line := study.Exit(worst, contended, allowContended)
	if line != "" {
		fmt.Fprintln(stderr, line)
	}
	return code
}

// stepArgs is a step's command line with the study's results directory,
// resume and checks (study.Step.CommandLine).
func (f *studyFlags) stepArgs(st study.Step, run bool) []string {
	var junit string
	if f.junit != "" {
		junit = compare.JUnitFile(f.junit, st.Dir)
	}
	return st.CommandLine(study.StepFlags{Out: f.out, Resume: f.resume, Quiet: f.quiet, Asserts: f.asserts, Labels: f.labels.Flags(), JUnit: junit}, run)
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellquote.Quote(a)
	}
	return out
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString(pre + line)
		}
	}
	return b.String()
}

// findNginx finds nginx where size and the demo do (a test's stand-in
// replaces it).
var findNginx = nginxingress.Available

// nginxFound is study.CheckNeeds' check of nginx.
func nginxFound() error {
	_, err := findNginx()
	return err
}

func listStudies(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "study\tneeds\tstudy's duration × repeats per step\twhat it reruns\n")
	for _, s := range study.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s × %d\t%s\n", s.Name, s.NeedsText(), s.Duration, s.RepeatsFor(study.Options{}), s.Title)
	}
	return tw.Flush()
}

// printSources lists where the study's figures were published and what
// each source states (the plan's dry run): a study's sources before
// anything runs.
func printSources(w io.Writer, s study.Study) error {
	pub, ok, err := s.Published()
	if err != nil || !ok {
		return err
	}
	for _, src := range pub.Sources {
		fmt.Fprintf(w, "source [%s]: %s\n  states: %s\n", src.Key, src.Line(), src.States)
	}
	for _, t := range pub.Tables {
		if t.Unsourced != "" {
			fmt.Fprintf(w, "unsourced: %s: %s\n", t.Metric, t.Unsourced)
		}
	}
	return nil
}

// printStudy prints the study's tables: published beside measured. It
// returns the orderings not decidable for contention ("vxlan below
// host-gw").
func printStudy(w io.Writer, s study.Study, f *studyFlags) (contended []string, err error) {
	m, err := study.ReadMeasured(f.out)
	if err != nil {
		return nil, err
	}
	pub, ok, err := s.Published()
	if err != nil {
		return nil, err
	}
	switch s.TableFor(ok) {
	case study.TablePaths:
		return nil, printPathsStudy(w, s, f)
	case study.TableOurs:
		fmt.Fprintf(w, "\nstudy %s: no published figures are in the repository yet: the tables above are ours alone\n", s.Name)
		return nil, nil
	}
	fmt.Fprintf(w, "\n== %s ==\n", s.Title)
	sets, err := study.Results(f.out, pub)
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		if set.Headed {
			fmt.Fprintf(w, "\n-- measured %s --\n", set.Where)
		}
		for _, t := range set.Tables {
			fmt.Fprintln(w)
			if err := t.Write(w); err != nil {
				return nil, err
			}
		}
	}
	if s.CostColumns && f.cpuPrice > 0 {
		fmt.Fprintf(w, "\ncost at %.2f per CPU a month (ours):\n", f.cpuPrice)
		if err := report.CostTable(w, m.SizingRows(), f.cpuPrice); err != nil {
			return nil, err
		}
	}
	if s.SideRows {
		if rows := m.SideRows(); len(rows) > 0 {
			fmt.Fprintln(w)
			if err := study.WriteSides(w, rows); err != nil {
				return nil, err
			}
		}
	}
	fmt.Fprintf(w, "\n%s.\n", study.Caveat)
	return sets.Contended(), nil
}

// printPathsStudy prints k8s-paths' table, from its step's paths.json:
// there are no published figures to set it beside.
func printPathsStudy(w io.Writer, s study.Study, f *studyFlags) error {
	dir := s.PathsDir(f.out, f.cluster)
	t, err := paths.ReadTable(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "\nstudy %s: %s holds no %s: nothing was measured\n", s.Name, dir, paths.File)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== %s ==\n", s.Title)
	if err := t.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s.\n", s.Ours)
	return nil
}
