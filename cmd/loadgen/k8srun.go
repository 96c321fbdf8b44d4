package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/k8splan"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	k8scost "loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/run"
	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/report"
	"loadgen/results/store"
)

type k8sRunFlags struct {
	opts       k8s.Options
	file       string
	out        string
	workers    int
	kubeconfig string
	context    string
	dryRun     bool
	startLead  time.Duration
	maxLate    time.Duration
	retries    int
	targetWait time.Duration
	cost       costSourceFlags // --prometheus, --no-metrics, --no-node-cost
	promCPU    string
	promMem    string
	promNode   [2]string // --prom-node-cpu, --prom-node-mem
	quiet      bool
	wide       bool
	check      checkFlags
	ui         uiFlags // --ui: the live dashboard
	labels     results.Labels
}

func newK8sRunCmd() *cobra.Command {
	f := &k8sRunFlags{}
	cmd := &cobra.Command{
		Use:   "run --mesh MESH -f sweep.yaml --workers N -o DIR",
		Short: "Run a sweep on a cluster: each step one Indexed Job of N workers, merged exactly",
		Long: fmt.Sprintf(`Apply the comparison's objects (as 'k8s render' prints them) in a namespace
loadgen creates, then run each step of the sweep as one Indexed Job of N
workers. Each worker takes 1/N of the connections and threads (closed loop)
or of the rate (open loop); all start at one instant written into the Job,
each measuring its clock against the API server's and refusing to run if it
started late (the step then runs again with twice the lead: --start-retries).
Their results come back through the API server (pod logs) and merge exactly
into DIR, the usual sweep results directory: 'loadgen report' reads it. The
proxies' CPU and memory per step come from metrics.k8s.io
(metrics-server) or from --prometheus. Everything created carries the run's
label and is deleted at the end, after Ctrl-C or a failed step too.

In the sweep file, host "target" means the comparison's target through the
mesh: http://target:%d (captured by sidecars, or behind the ingress or
gateway) and http://target:%d (the same pods, outside sidecar capture);
for gRPC %d and its direct %d, for raw TCP tcp://target:%d and %d,
for HTTP/3 (protocol: h3) https://target:%d through an ingress controller
that serves it and the direct UDP %d (a gRPC, TCP or HTTP/3 step to the
direct %d goes to its protocol's direct port).`, k8s.PortHTTP, k8s.PortHTTPDirect, k8s.PortGRPC, k8s.PortGRPCDirect, k8s.PortTCP, k8s.PortTCPDirect, k8s.PortHTTP, k8s.PortHTTPSDirect, k8s.PortHTTPDirect),
		Example: `  loadgen k8s run --mesh istio -f sweep.yaml --workers 4 -o results/istio
  loadgen k8s run --mesh none -f sweep.yaml --workers 4 -o results/baseline
  loadgen k8s run --mesh istio --mode serveronly -f sweep.yaml --dry-run
  loadgen report results/istio --baseline results/baseline --html istio.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.ui.done(cmd.Context(), runK8s(cmd, f)) },
	}
	fl := cmd.Flags()
	meshFlags(fl, &f.opts)
	controlPlaneFlag(fl, &f.opts)
	placementFlags(fl, &f.opts)
	hopsFlag(fl, &f.opts)
	fl.StringVarP(&f.file, "file", "f", "", "sweep file (YAML, as 'loadgen sweep -f'), e.g. examples/k8s-sweep.yaml (required)")
	fl.StringVarP(&f.out, "output", "o", "", "results directory (required, but with --dry-run)")
	fl.IntVar(&f.workers, "workers", 1, "workers per step (pods of the Indexed Job), each taking 1/N of the connections, threads and rate")
	clusterFlags(fl, &f.kubeconfig, &f.context)
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the objects and the plan; touch no cluster")
	fl.DurationVar(&f.startLead, "start-lead", run.DefaultStartLead, "how far ahead each step's start instant is set: time to schedule and start the pods")
	fl.DurationVar(&f.maxLate, "max-late", worker.DefaultMaxLate, "a worker starting later than this fails the step")
	fl.IntVar(&f.retries, "start-retries", run.DefaultStartRetries, "run a step again, with twice the start lead (kept for later steps), when its workers started late; 0: fail it")
	fl.DurationVar(&f.targetWait, "target-wait", run.DefaultTargetWait, "how long to wait for the target (and an ingress's or gateway's address); past it, the steps that load the target fail with its pods' reason")
	f.cost.register(fl)
	fl.StringVar(&f.promCPU, "prom-cpu", "", "Prometheus series selector of a cumulative CPU-seconds counter; {namespace}, {pods} (the watched pods' names) and {container} (the watched containers' names, a regular expression: match it with container=~) are replaced (default cAdvisor's container_cpu_usage_seconds_total)")
	fl.StringVar(&f.promMem, "prom-mem", "", "Prometheus series selector of a bytes gauge, as --prom-cpu (default cAdvisor's container_memory_working_set_bytes)")
	fl.StringVar(&f.promNode[0], "prom-node-cpu", "", "Prometheus series selector of a node's CPU-seconds counter, {node} replaced (default cAdvisor's root cgroup: "+k8scost.DefaultPromNodeCPU+")")
	fl.StringVar(&f.promNode[1], "prom-node-mem", "", "Prometheus series selector of a node's bytes gauge, as --prom-node-cpu (default "+k8scost.DefaultPromNodeMemory+")")
	fl.StringVar(&f.opts.IngressService, "ingress-service", "", "gateway, ingress, ingress-nginx with --via service: the controller's Service the workers load, "+
		"NAMESPACE/NAME (e.g. traefik/traefik); default the one the controller says is its own (ingress-nginx's --publish-service, a Gateway's labelled Service), "+
		"else the one at the published address")
	fl.StringVar(&f.opts.RunID, "run-id", "", "the run's label value (default a new random one)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines (what is applied, each step's Job)")
	fl.BoolVar(&f.wide, "wide", false, wideUsage)
	labelFlag(fl, &f.labels)
	f.check.registerSweep(fl)
	f.ui.register(fl, "k8s run")
	return cmd
}

func runK8s(cmd *cobra.Command, f *k8sRunFlags) error {
	if f.file == "" {
		return fmt.Errorf("-f: a sweep file is needed (see 'loadgen sweep --help' for its format)")
	}
	if f.out == "" && !f.dryRun {
		return fmt.Errorf("-o: say where to write the results")
	}
	if err := k8s.CheckRunCounts(f.workers, f.retries); err != nil {
		return err
	}
	f.cost.set(&f.opts)
	if err := f.opts.Validate(); err != nil {
		return err
	}
	if err := f.check.parse(); err != nil {
		return err
	}
	if err := k8scost.CheckSelector("--prom-cpu", f.promCPU); err != nil {
		return err
	}
	if err := k8scost.CheckSelector("--prom-mem", f.promMem); err != nil {
		return err
	}
	for i, name := range []string{"--prom-node-cpu", "--prom-node-mem"} {
		if err := k8scost.CheckNodeSelector(name, f.promNode[i]); err != nil {
			return err
		}
	}
	fh, err := os.Open(f.file)
	if err != nil {
		return err
	}
	spec, err := sweep.Parse(fh)
	fh.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	load, steps, err := k8splan.ForCluster(&spec, &f.opts, cmd.Flags().Changed("hops"))
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	load.Labels = f.labels
	f.opts.RunID = k8s.OrNewRunID(f.opts.RunID)
	w := cmd.OutOrStdout()
	co := &run.Coordinator{Options: f.opts, Load: load, Steps: steps, Workers: f.workers, Dir: f.out,
		StartLead: f.startLead, MaxLate: f.maxLate, StartRetries: f.retries, TargetWait: f.targetWait, Version: loadgen.Version(),
		Events: func(format string, a ...any) {
			if !f.quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", a...)
			}
		}}
	if err := co.Check(); err != nil {
		return err // a step the mesh cannot carry: before the cluster is touched
	}
	if f.dryRun {
		return co.DryRun(w)
	}
	if err := f.startUI(co, cmd.ErrOrStderr()); err != nil {
		return err // before the cluster is touched
	}
	if co.Manifest, err = spec.Manifest(); err != nil {
		return failf("%v", err)
	}
	ctx := cmd.Context()
	c, err := cluster.Connect(ctx, f.kubeconfig, f.context)
	if err != nil {
		return failf("%v", err)
	}
	co.Cluster = c
	prom := k8scost.Prometheus{URL: f.cost.prometheus, CPU: f.promCPU, Memory: f.promMem, NodeCPU: f.promNode[0], NodeMemory: f.promNode[1]}
	if co.Watcher, err = k8scost.NewWatcher(ctx, c, f.opts.Metrics, f.opts.Namespace, prom); err != nil {
		return failf("%v", err)
	}
	res, err := co.Run(ctx)
	if err != nil {
		return failf("%v", err)
	}
	return f.finish(w, &spec, res)
}

// finish prints a k8s run's steps as loadgen sweep prints a sweep's, and
// ends the run with the status and the line sweep gives the same steps
// (compare.FoldSteps): the worst of what its failed steps come to (no
// result, a run that failed its verdict or that --abort-on-fail stopped)
// and of the check.
func (f *k8sRunFlags) finish(w io.Writer, spec *sweep.Spec, res []*results.Step) error {
	if len(res) > 0 {
		// The table loadgen sweep prints, with each side's proxy figures.
		opt := tableOptions(w, f.wide)
		opt.Hops = spec.Hops
		if terr := report.SweepTable(w, spec.BaselineName(), res, opt); terr != nil {
			return failf("%v", terr)
		}
		fmt.Fprintln(w)
	}
	failed := len(compare.FailedSteps(res))
	fmt.Fprintln(w, store.ResultsLine(f.out, fmt.Sprintf("%s, %d failed", plural(len(res), "step"), failed), store.ReadWith(f.out)))
	checked, err := f.check.checkSteps(w, res)
	if err != nil {
		return failf("%v", err)
	}
	code, line := compare.FoldSteps(res, compare.FailedSteps(res), len(res), checked)
	if line != "" {
		return runFailure{err: errors.New(line), code: code}
	}
	return exitWith(code)
}
