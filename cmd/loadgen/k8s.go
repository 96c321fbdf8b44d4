package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/loadgen"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/run"
	"loadgen/meshes/k8s/worker"
	"loadgen/results/compare"
)

func newK8sCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Render mesh comparisons for Kubernetes and run sweeps there as Indexed Jobs",
		Long: `Meet the meshes where they run. 'render' prints the objects of a comparison —
the httpbin/gRPC/TCP target, its Service, a client Job and the mesh's or
gateway's own objects — as YAML that kubectl applies. 'run' applies them, runs
each sweep step as one Indexed Job of N workers started at one instant,
collects every worker's result through the API server, merges the histograms
exactly and cleans up. 'cleanup' removes what a killed run left. 'rbac' prints
the ClusterRole and Roles a run needs.

Meshes: ` + strings.Join(k8s.Meshes[:5], ", ") + `,
` + strings.Join(k8s.Meshes[5:], ", ") + `.`,
		Example: `  loadgen k8s rbac --mesh istio | kubectl apply -f -
  loadgen k8s render --mesh istio | kubectl apply --dry-run=client -f -
  loadgen k8s run --mesh istio -f examples/k8s-sweep.yaml --workers 4 -o results/istio
  loadgen k8s paths -o results/paths
  loadgen k8s cleanup`,
	}
	cmd.AddCommand(newK8sRenderCmd(), newK8sRunCmd(), newK8sPathsCmd(), newK8sCleanupCmd(), newK8sRBACCmd(), newK8sWorkerCmd())
	return cmd
}

// meshFlags are the rendering options every k8s command shares.
func meshFlags(fl *pflag.FlagSet, o *k8s.Options) {
	fl.StringVar(&o.Mesh, "mesh", k8s.MeshNone, "mesh or gateway: "+strings.Join(k8s.Meshes, ", "))
	fl.StringVarP(&o.Namespace, "namespace", "n", k8s.DefaultNamespace, "namespace of the comparison (loadgen creates it)")
	fl.StringVar(&o.Mode, "mode", k8s.ModeBoth, "sidecar placement for istio, linkerd, appmesh and sidecar: "+strings.Join(k8s.Modes, ", ")+" (none: sidecar only)")
	fl.StringVar(&o.Image, "image", k8s.DefaultImage, "the loadgen image (built from the repository's Dockerfile)")
	fl.StringVar(&o.Revision, "revision", "", "istio: inject with istio.io/rev=REV, e.g. canary (default istio-injection=enabled)")
	fl.IntVar(&o.Concurrency, "concurrency", 0, fmt.Sprintf("istio, linkerd, appmesh, sidecar: each sidecar's worker threads, and for the first three its CPU limit "+
		"in cores (istio concurrency, linkerd proxy-cpu-limit; appmesh: the limit only) (default %d)", k8s.DefaultConcurrency))
	fl.StringVar(&o.ProxyCPU, "proxy-cpu", "", "istio, linkerd, appmesh: each sidecar's CPU request (default "+k8s.DefaultProxyCPU+")")
	fl.StringVar(&o.ProxyMemory, "proxy-memory", "", "istio, linkerd, appmesh: each sidecar's memory request (default "+k8s.DefaultProxyMemory+")")
	fl.BoolVar(&o.MTLS, "mtls", false, "istio: a STRICT PeerAuthentication for the namespace; sidecar: mutual TLS between the two sidecars (--mode both)")
	fl.StringVar(&o.Class, "class", "", "gateway: the GatewayClass (traefik, nginx, eg, istio, cilium, amazon-vpc-lattice…); ingress: the IngressClass (traefik, haproxy…); ingress-nginx: the IngressClass (default "+k8s.DefaultIngressCls+")")
	fl.StringVar(&o.Gateway, "gateway-name", "", "gateway: the Gateway's name (default "+k8s.GatewayName+"); amazon-vpc-lattice maps it to the VPC Lattice service network of that name")
	fl.StringVar(&o.Via, "via", "", "gateway, ingress, ingress-nginx: how the workers reach it: service (the controller's Service inside the cluster; "+
		"the default) or published (the address the Ingress or Gateway publishes, e.g. a cloud load balancer); amazon-vpc-lattice: published")
	fl.StringVar(&o.IngressNamespace, "ingress-namespace", k8s.DefaultIngressNS, "ingress-nginx: the controller's namespace")
	fl.BoolVar(&o.ConfigureController, "configure-controller", false, "ingress-nginx: set the controller's shared ConfigMap (worker-processes, keep-alive-requests) for the run; k8s run and k8s cleanup put it back")
	fl.IntVar(&o.Workers, "worker-processes", 0, fmt.Sprintf("ingress-nginx, with --configure-controller: the controller's worker-processes (default %d; never auto: it counts the node's cores)", k8s.DefaultWorkers))
	fl.BoolVar(&o.SameNodeOK, "same-node-ok", false, "let clients share the target's node (and the proxies') when no other fits (a preference, not a rule)")
	fl.StringVar(&o.WorkerCPU, "worker-cpu", "", "each worker's CPU request (a worker is never BestEffort) (default "+k8s.DefaultWorkerCPU+", or a lower --worker-limits cpu)")
	fl.StringVar(&o.WorkerMemory, "worker-memory", "", "each worker's memory request (default "+k8s.DefaultWorkerMem+", or a lower --worker-limits memory)")
	fl.StringVar(&o.Sidecar.Proxy, "proxy", "", "sidecar: the proxy beside each pod: "+strings.Join(k8s.SidecarProxies, ", ")+" (default "+k8s.DefaultSidecarProxy+")")
	fl.StringVar(&o.Sidecar.Image, "proxy-image", "", "sidecar: the proxy's image (default its official one: "+k8s.DefaultProxyImageList()+")")
}

// controlPlaneFlag is --control-plane, on the commands whose run records
// cost (k8s run, and k8s rbac for the permissions it needs).
func controlPlaneFlag(fl *pflag.FlagSet, o *k8s.Options) {
	fl.StringArrayVar(&o.ControlPlane, "control-plane", nil, "the mesh's control-plane pods whose CPU and memory each step records beside the proxies', "+
		"NAMESPACE/SELECTOR or NAME=NAMESPACE/SELECTOR (repeatable), or none (default "+k8s.DefaultControlPlanesHelp()+")")
}

// costSourceFlags are where a run reads its cost: k8s run's, and k8s
// rbac's for the permissions that run needs.
type costSourceFlags struct {
	prometheus string
	noMetrics  bool
	noNodeCost bool
}

func (c *costSourceFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&c.prometheus, "prometheus", "", "read the proxies' CPU and memory from this Prometheus, e.g. http://prometheus.monitoring:9090 (default metrics.k8s.io)")
	fl.BoolVar(&c.noMetrics, "no-metrics", false, "record no proxy CPU and memory")
	fl.BoolVar(&c.noNodeCost, "no-node-cost", false, "leave out the nodes' own CPU and memory (by default each node that ran a step's target, workers or proxies is recorded)")
}

// set puts the source into the options (the permissions and the run's
// watcher follow it): k8s.MetricsSource's choice.
func (c *costSourceFlags) set(o *k8s.Options) {
	o.Metrics = k8s.MetricsSource(c.prometheus, c.noMetrics)
	o.NoNodeCost = c.noNodeCost
}

// hopsFlag is --hops, of the commands that render the targets.
func hopsFlag(fl *pflag.FlagSet, o *k8s.Options) {
	fl.IntVar(&o.Hops, "hops", 1, fmt.Sprintf("targets a request crosses, isotope-style: loadgen-target (which the paths load) calls loadgen-target-2 and so on, "+
		"each on its mesh port (the direct path on the direct ports), so a mesh path crosses N proxy pairs (1 up to %d; not appmesh, istio-ambient, istio-waypoint)", k8s.MaxHops))
}

func newK8sRenderCmd() *cobra.Command {
	var o k8s.Options
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the objects of a mesh comparison as kubectl-applicable YAML",
		Long: `Print the namespace, the target (loadgen serve httpbin, grpc and tcp in one pod),
its Service (ports http-*, grpc-*, tcp-*), the mesh's or gateway's objects and a
client Job (two workers of 'loadgen run' against the mesh), every object
labelled with the run id. Nothing is sent to a cluster.`,
		Example: `  loadgen k8s render --mesh istio -n bench > bench.yaml && kubectl apply -f bench.yaml
  loadgen k8s render --mesh istio --mode serveronly --mtls
  loadgen k8s render --mesh istio-waypoint
  loadgen k8s render --mesh gateway --class nginx
  loadgen k8s render --mesh gateway --class eg --routes http,grpc,tcp
  loadgen k8s render --mesh gateway --class amazon-vpc-lattice --gateway-name my-service-network
  loadgen k8s render --mesh ingress --class traefik
  loadgen k8s render --mesh ingress-nginx
  loadgen k8s render --mesh ingress-nginx --configure-controller --worker-processes 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := k8s.Render(o, nil)
			if err != nil {
				return err
			}
			for _, n := range r.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), n)
			}
			for _, n := range run.ControllerRenderNotes(o) {
				fmt.Fprintln(cmd.ErrOrStderr(), n)
			}
			return r.WriteYAML(cmd.OutOrStdout())
		},
	}
	meshFlags(cmd.Flags(), &o)
	placementFlags(cmd.Flags(), &o)
	hopsFlag(cmd.Flags(), &o)
	cmd.Flags().StringSliceVar(&o.Routes, "routes", nil, "gateway, ingress, ingress-nginx: the routes rendered to the target, some of "+
		strings.Join(k8s.RouteKinds, ", ")+" (default http; k8s run renders its sweep's)")
	return cmd
}

func newK8sRBACCmd() *cobra.Command {
	var (
		ro  k8s.RBACOptions
		src costSourceFlags
	)
	cmd := &cobra.Command{
		Use:   "rbac --mesh MESH [-n NS] [--for run|paths|cleanup] [--bind NS/SA]",
		Short: "Print the roles a run needs, and nothing more (YAML for kubectl apply)",
		Long: `Print the permissions 'k8s run' (or 'k8s paths', 'k8s cleanup') needs for a mesh and
its options, from the one table the code is tested against: a ClusterRole — the
cluster-scoped rules, the reads across namespaces (ztunnel's, a gateway's
Service), and the rules in the run's namespace, which the run creates, so that
no Role can be bound there beforehand — and a Role per namespace that exists
before the run (the ingress controller's, kube-system). With --bind, the
bindings of that ServiceAccount too. Never nodes/proxy (the kubelet's API).
Give the run's own --prometheus, --no-metrics and --no-node-cost: without
them the roles read metrics.k8s.io, pods' and nodes'. Nothing is sent to a
cluster.`,
		Example: `  loadgen k8s rbac --mesh istio -n bench | kubectl apply -f -
  loadgen k8s rbac --mesh ingress-nginx --configure-controller --bind ci/loadgen
  loadgen k8s rbac --mesh istio --prometheus http://prometheus.monitoring:9090
  loadgen k8s rbac --for paths -n loadgen-paths`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src.set(&ro.Options)
			objs, err := k8s.RBAC(ro)
			if err != nil {
				return err
			}
			us, err := k8s.ToUnstructured(objs...)
			if err != nil {
				return failf("%v", err)
			}
			return (&k8s.Rendering{Objects: us}).WriteYAML(cmd.OutOrStdout())
		},
	}
	meshFlags(cmd.Flags(), &ro.Options)
	controlPlaneFlag(cmd.Flags(), &ro.Options)
	src.register(cmd.Flags())
	_ = cmd.Flags().Set("namespace", "")
	cmd.Flags().Lookup("namespace").DefValue = k8s.DefaultNamespace + " (k8s paths: " + k8s.DefaultPathsNamespace + ")"
	cmd.Flags().StringVar(&ro.For, "for", k8s.ForRun, "the command: run, paths or cleanup")
	cmd.Flags().StringVar(&ro.Bind, "bind", "", "also bind the roles to this ServiceAccount, NAMESPACE/NAME, e.g. ci/loadgen (default: no binding)")
	return cmd
}

func newK8sCleanupCmd() *cobra.Command {
	var (
		ns, runID, kubeconfig, kctx string
	)
	cmd := &cobra.Command{
		Use:   "cleanup -n NAMESPACE",
		Short: "Delete what a killed 'k8s run' left: only objects with loadgen's label",
		Long: `Delete, in the namespace, every object labelled app.kubernetes.io/managed-by=loadgen
(of one run with --run-id), the cluster-scoped App Mesh Mesh tied to it, and the
namespace itself only if loadgen created it. Nothing without loadgen's label is
touched. An ingress controller ConfigMap that a run of the namespace changed
(--configure-controller) gets its previous values back.`,
		Example: `  loadgen k8s cleanup -n bench
  loadgen k8s cleanup -n bench --run-id r1a2b3c4d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ns == "" {
				return fmt.Errorf("-n: say which namespace to clean up")
			}
			c, err := cluster.Connect(cmd.Context(), kubeconfig, kctx)
			if err != nil {
				return failf("%v", err)
			}
			// A killed run's ingress namespace is not known: every one is looked in.
			done := c.CleanupRun(cmd.Context(), cluster.RunCleanup{Namespace: ns, RunID: runID, Restore: true})
			for _, r := range done.Restored {
				fmt.Fprintf(cmd.OutOrStdout(), "restored %s\n", r)
			}
			for _, d := range done.Deleted {
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", d)
			}
			if err := done.Err(); err != nil {
				return failf("%v", err)
			}
			if len(done.Deleted) == 0 && len(done.Restored) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "nothing of loadgen's in namespace %s\n", ns)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&ns, "namespace", "n", "", "namespace to clean up, e.g. bench (required)")
	fl.StringVar(&runID, "run-id", "", "only this run's objects (default: every loadgen run's)")
	clusterFlags(fl, &kubeconfig, &kctx)
	return cmd
}

func newK8sWorkerCmd() *cobra.Command {
	var (
		cfg     worker.Config
		startAt string
	)
	cmd := &cobra.Command{
		Use:   "worker [flags] -- run [run flags] URL",
		Short: "One worker of a distributed run (what 'k8s run' puts in its Jobs' pods)",
		Long: `Wait for the start instant, measure this pod's clock against the API server's,
run this worker's share of the load with 'loadgen run', and print the result as
one log line for the coordinator. The share is 1/--workers of --connections,
--threads and --rate, by JOB_COMPLETION_INDEX. The share is judged on the
merged step, by the coordinator: a share whose run failed its own verdict
(nothing succeeded, an outage) is reported as measured, and the worker exits
0; any other failure is in its report line. A worker refuses a coordinator
whose --wire (the version of the command line and report they share) is not
its own, naming both loadgen versions.`,
		Example: `  loadgen k8s worker --wire ` + strconv.Itoa(k8s.WireVersion) + ` --workers 4 --connections 64 --threads 8 \
      --start-at 2026-11-01T12:00:00Z -- run -d 30s http://target:8080/get`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "run" {
				return fmt.Errorf("after --: want 'run …', got %q", args[0])
			}
			cfg.RunArgs = args[1:]
			cfg.Version = loadgen.Version()
			if startAt != "" {
				t, err := time.Parse(time.RFC3339Nano, startAt)
				if err != nil {
					return fmt.Errorf("--start-at: %v", err)
				}
				cfg.StartAt = t
			}
			if !cmd.Flags().Changed("index") {
				i, ok, err := worker.IndexFromEnv()
				if err != nil {
					return err
				}
				if ok {
					cfg.Index = i
				}
			}
			runShare := func(ctx context.Context, args []string, _ string) error {
				rc := newRunCmd()
				rc.SetArgs(args)
				rc.SetOut(cmd.OutOrStdout())
				said := &lastBytes{max: 16 << 10}
				rc.SetErr(serialised(io.MultiWriter(cmd.ErrOrStderr(), said)))
				rc.SilenceUsage, rc.SilenceErrors = true, true
				err := rc.ExecuteContext(ctx)
				code, ok := exitStatus(err)
				switch {
				case ok && code == compare.Failed:
					// Its verdict (nothing succeeded, an outage): the
					// coordinator judges the merged run by it.
					err = fmt.Errorf("%w: %w", worker.ErrOwnVerdict, err)
				case ok:
					// The run said why on its stderr and returned a bare
					// status: the report's error carries what it said.
					err = fmt.Errorf("%w%s", err, worker.Tail(said.b, 3))
				}
				return err
			}
			if err := worker.Run(cmd.Context(), cfg, runShare, cmd.OutOrStdout()); err != nil {
				return failf("%v", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Wire, strings.TrimPrefix(k8s.FlagWire, "--"), 0, fmt.Sprintf("the coordinator's wire version (k8s run sets it); another than this loadgen's, %d, is refused, as is 0, the default: a coordinator too old to say", k8s.WireVersion))
	fl.StringVar(&cfg.CoordinatorVersion, strings.TrimPrefix(k8s.FlagCoordinatorVersion, "--"), "", "the coordinator's loadgen version, e.g. v1.2.0, named when the wire versions differ (k8s run sets it)")
	fl.IntVar(&cfg.Workers, "workers", 1, "workers of the step")
	fl.IntVar(&cfg.Index, "index", 0, "this worker (default $JOB_COMPLETION_INDEX)")
	fl.IntVar(&cfg.Connections, "connections", 1, "connections of the step, in all")
	fl.IntVar(&cfg.Threads, "threads", 1, "threads of the step, in all")
	fl.Float64Var(&cfg.Rate, "rate", 0, "requests/s of the step, in all (0: closed loop)")
	fl.StringVar(&startAt, "start-at", "", "the start instant on the API server's clock (RFC 3339); empty: at once")
	fl.DurationVar(&cfg.MaxLate, "max-late", worker.DefaultMaxLate, "refuse to run when reaching the start instant later than this")
	fl.StringVar(&cfg.Clock, "clock", worker.InClusterClock(), "URL whose Date header is the reference clock (default the API server's /version)")
	fl.StringVar(&cfg.ClockCA, "clock-ca", worker.ServiceAccountCA, "CA file for --clock")
	return cmd
}

// clusterFlags registers --kubeconfig and --context, worded once for the
// commands that reach a cluster.
func clusterFlags(fl *pflag.FlagSet, kubeconfig, kctx *string) {
	fl.StringVar(kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(kctx, "context", "", "kubeconfig context (default the current one)")
}

// lastBytes keeps the last max bytes written to it.
type lastBytes struct {
	max int
	b   []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}
