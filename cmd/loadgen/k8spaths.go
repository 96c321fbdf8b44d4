package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/compare"
	"loadgen/results/store"
)

type k8sPathsFlags struct {
	opts       paths.Options
	tolerance  string
	legacyTol  string // --tolerance, --tcp-tolerance's old name
	streamSize string
	out        string
	kubeconfig string
	context    string
	dryRun     bool
	quiet      bool
}

func newK8sPathsCmd() *cobra.Command {
	f := &k8sPathsFlags{}
	cmd := &cobra.Command{
		Use:   fmt.Sprintf("paths [-d %s] [--repeats %d] [--tcp-tolerance %s] [--judge %s|%s]", paths.DefaultDuration, paths.DefaultRepeats, compare.FormatPercent(paths.DefaultTolerance), paths.JudgeNetperf, paths.JudgeAll),
		Short: "Measure k8s-netperf's paths (pod, ClusterIP, NodePort…) against hostNetwork",
		Long: fmt.Sprintf(`Measure a cluster's network paths as k8s-netperf does, with loadgen's own client
and servers in pods:

  host-host                 hostNetwork client → hostNetwork server, one node (the node's IP):
                            the baseline
  pod-pod-same-node         pod → the server pod's IP, one node
  pod-clusterip             pod → a ClusterIP Service whose endpoint is the server pod
  pod-nodeport              pod → the server's node IP and the Service's nodePort
  host-host-other-node      hostNetwork ↔ hostNetwork across nodes: the baseline of the next rows
  pod-pod-other-node        pod → the server pod's IP from another node
  pod-clusterip-other-node  pod → the ClusterIP from another node (its endpoint is not on
                            the client's)

each × TCP_STREAM, TCP_RR and TCP_CRR (-p tcp-stream|tcp-rr|tcp-crr, %d-byte
messages, one connection, against loadgen serve tcp) and HTTP/1.1 (GET
%s, closed loop, %d connections, against loadgen serve httpbin); asked
with --tests, UDP_STREAM and UDP_RR (-p udp-stream|udp-rr, %d-byte datagrams,
one connection, against loadgen serve udp on UDP port %d, its Services' port
of protocol UDP; UDP_STREAM's figure is what the sink received). Nodes
are read from the cluster: servers and same-node clients run on the first
schedulable node (not cordoned, not tainted NoSchedule), cross-node clients on
the second; with one schedulable node the cross-node rows say they are not
measurable here.

Each measurement is one Job of one 'loadgen k8s worker' pod, one at a time;
each repeat is a full pass over tests and paths. A path's figure is the median
of its repeats, with their spread, and its ratio to the hostNetwork row of the
same test. --tcp-tolerance is k8s-netperf's: exit status %d when a judged row
falls further below its hostNetwork row than it (every figure here is higher
is better), %d when a measurement failed. Which rows are judged is k8s-netperf's
rule by default (--judge netperf): TCP_STREAM, pod ↔ pod across nodes against
hostNetwork across nodes — on one schedulable node no row is; --judge all
judges every pod row (the same-node rows against hostNetwork over the node's
own IP included). Every row shows its ratio either way. kube-proxy's mode is recorded, from
what the cluster publishes in kube-system: "replaced" where Cilium's
cilium-config says its kube-proxy replacement serves the Services, else
kubeadm's ConfigMap kube-proxy,
EKS's kube-proxy-config, else the kube-proxy pods' --proxy-mode, else
"unknown" and why (never the kubelet's API through the node proxy).

DIR gets paths.json (the table, the nodes, the kube-proxy mode and its source)
and one results directory per test, which 'loadgen report DIR' reads. The
namespace is created by loadgen and deleted at the end with everything in it,
after Ctrl-C too; 'loadgen k8s cleanup -n NS' removes what a killed run left.
The hostNetwork server listens on the node's IP, ports %d and %d.
--paths and --tests measure some only (a pod path with its hostNetwork row);
--tests mtls (only when asked for) is HTTP/1.1 over mutual TLS: the servers
require a client certificate (loadgen serve httpbin --client-ca, ports %d
and %d) and the clients present theirs, both issued by a CA made for the
run and kept in the Secret loadgen-client-cert;
--flannel-backend refuses a cluster whose nodes do not run that Flannel
backend (their flannel.alpha.coreos.com/backend-type), which is recorded
either way.`, paths.MessageSize, paths.HTTPEndpoint, paths.HTTPConnections, paths.MessageSize, k8s.PortUDP, compare.Breached, compare.Failed, paths.HostPortHTTP, paths.HostPortTCP, paths.PortMTLS, paths.HostPortMTLS),
		Example: `  loadgen k8s paths -o results/paths
  loadgen k8s paths -d 2s --repeats 2 --tcp-tolerance 20% --image registry.example/loadgen:v1 \
      -o results/quick
  loadgen k8s paths --dry-run
  loadgen report results/paths`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runK8sPaths(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.opts.Namespace, "namespace", "n", paths.DefaultNamespace, "namespace of the run (loadgen creates it, and deletes it at the end)")
	fl.StringVar(&f.opts.Image, "image", k8s.DefaultImage, "the loadgen image (built from the repository's Dockerfile)")
	fl.DurationVarP(&f.opts.Duration, "duration", "d", paths.DefaultDuration, "each sample's measured duration (k8s-netperf's "+paths.DefaultDuration.String()+")")
	fl.IntVar(&f.opts.Repeats, "repeats", paths.DefaultRepeats, fmt.Sprintf("samples of each path × test (k8s-netperf's %d)", paths.DefaultRepeats))
	fl.StringVar(&f.tolerance, "tcp-tolerance", compare.FormatPercent(paths.DefaultTolerance), fmt.Sprintf("how far below its hostNetwork row a judged row may fall before the exit status is %d (k8s-netperf's --tcp-tolerance)", compare.Breached))
	fl.StringVar(&f.legacyTol, "tolerance", "", "--tcp-tolerance's former name")
	_ = fl.MarkHidden("tolerance")
	fl.StringVar(&f.opts.Judge, "judge", paths.JudgeNetperf, "rows the tolerance judges: netperf (k8s-netperf's rule: TCP_STREAM, pod ↔ pod across nodes) or all (every pod row)")
	fl.StringVarP(&f.out, "output", "o", "", store.OutHelp("k8s-paths"))
	clusterFlags(fl, &f.kubeconfig, &f.context)
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and the objects; touch no cluster")
	fl.StringVar(&f.opts.RunID, "run-id", "", "the run's label value (default a new random one)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines (the table is printed still)")
	fl.StringSliceVar(&f.opts.Paths, "paths", nil, "only these paths (default all), each pod path with its hostNetwork row")
	fl.StringSliceVar(&f.opts.Tests, "tests", nil, "only these tests (default all but UDP and mtls): tcp-stream, tcp-rr, tcp-crr, http, udp-stream, udp-rr, and mtls (HTTP/1.1 over mutual TLS: a CA made for the run, the client's certificate in a Secret)")
	fl.StringVar(&f.streamSize, "stream-size", "", fmt.Sprintf("TCP_STREAM's write size (default %d B, k8s-netperf's; 128KiB is iperf-style)", paths.MessageSize))
	labelFlag(fl, &f.opts.Labels)
	fl.StringVar(&f.opts.FlannelBackend, "flannel-backend", "", "refuse a cluster whose nodes do not run this Flannel backend, e.g. vxlan (or host-gw, udp…; default: any CNI)")
	fl.StringVar(&f.opts.CNI, "cni", "", "name the cluster's datapath as the lab's modes do (macvlan, vxlan, host-gw, ebpf…): recorded in paths.json, where loadgen study cni-matrix reads the rows as that mode's (default: Flannel's backend, when the nodes run Flannel)")
	return cmd
}

func runK8sPaths(cmd *cobra.Command, f *k8sPathsFlags) error {
	flag := "--tcp-tolerance"
	if cmd.Flags().Changed("tolerance") {
		if cmd.Flags().Changed("tcp-tolerance") {
			return errors.New("--tolerance is --tcp-tolerance's former name: give one")
		}
		flag, f.tolerance = "--tolerance", f.legacyTol
	}
	tol, err := compare.ParsePercent(f.tolerance)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	f.opts.Tolerance = tol
	if f.streamSize != "" {
		if f.opts.StreamSize, err = sweep.ParseMessageSize("--stream-size", f.streamSize); err != nil {
			return err
		}
	}
	if err := paths.CheckSamples(f.opts.Duration, f.opts.Repeats); err != nil {
		return err // the options' zero is their default: given on the command line it is refused
	}
	f.opts.RunID = k8s.OrNewRunID(f.opts.RunID)
	if err := f.opts.Validate(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.dryRun {
		return paths.DryRun(w, f.opts)
	}
	if f.out == "" {
		f.out = store.DefaultDir("k8s-paths", time.Now())
	}
	ctx := cmd.Context()
	c, err := cluster.Connect(ctx, f.kubeconfig, f.context)
	if err != nil {
		return failf("%v", err)
	}
	run := &paths.Runner{Cluster: c, Options: f.opts, Dir: f.out, Env: loadgen.Environment(),
		Events: func(format string, a ...any) {
			if !f.quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", a...)
			}
		}}
	table, err := run.Run(ctx)
	return f.finish(ctx, w, cmd.ErrOrStderr(), table, err)
}

// finish prints what a paths run measured, the whole table or what an
// interrupt or a failure left, and ends the command: 130 after Ctrl-C, 1
// for a run that failed, else paths.Exit's status of the rows
// (compare.SweepOutcome).
func (f *k8sPathsFlags) finish(ctx context.Context, w, stderr io.Writer, table *paths.Table, err error) error {
	if table != nil && table.Rows != nil {
		fmt.Fprintln(w)
		if werr := table.WriteText(w); werr != nil {
			return failf("%v", werr)
		}
		fmt.Fprintf(w, "\n%s\n", store.ResultsLine(f.out, paths.File, store.ReadWith(f.out)))
	}
	folded := compare.OK
	if table != nil {
		folded = paths.Exit(table.Rows)
	}
	code, ferr := compare.SweepOutcome(err, nil, ctx.Err() != nil, folded)
	switch {
	case code == compare.Interrupted:
		fmt.Fprintln(stderr, compare.InterruptedLine("the measurements made are saved, and the run's objects deleted"))
		if err != nil && !errors.Is(err, ctx.Err()) {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
		}
	case ferr != nil:
		return failf("%v", ferr)
	}
	return exitWith(code)
}
