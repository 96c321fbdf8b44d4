// Package study reruns published benchmark studies as fixed plans over
// loadgen's own commands (lab, size, sweep), and sets what they measure
// beside the figures the studies published.
//
// A Study is data: what it needs (root, nginx, a cluster), the loadgen
// command lines of its steps, each writing one directory under the
// study's results, and the published tables (published.json) it is read
// against. The command line runs the steps; Compare reads the results.
package study

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"loadgen/internal/sidecarnames"
)

// Need is something a study needs that a machine may lack.
type Need string

const (
	NeedRoot    Need = "root"  // network namespaces: the lab
	NeedNginx   Need = "nginx" // Debian's nginx on PATH
	NeedCluster Need = "a Kubernetes cluster"
)

// Step is one loadgen command of a study's plan.
type Step struct {
	Name string // what it measures, for progress lines
	Dir  string // its results directory, under the study's -o
	// Args is the command line, less -o, --resume, -q and the CI checks;
	// OutDir in an argument stands for the study's -o.
	Args []string
	// Files are written under the study's -o before the step runs (a
	// sweep file for loadgen k8s run): name → content.
	Files map[string]string
	// Whole marks a command without --resume of its own (k8s run): on
	// resume, a step whose directory holds results is kept, not rerun.
	Whole bool
}

// OutDir stands for the study's results directory in a step's Args.
const OutDir = "{study-dir}"

// Options change a study's plan within its method.
type Options struct {
	// Duration is each step's measured duration; 0 is the study's own.
	Duration time.Duration
	// CPUs bounds nginx-sizing's worker counts (1, 2, 4 … up to CPUs).
	CPUs int
	// Kubeconfig (or Context) runs mesh-ladder on a cluster, through
	// loadgen k8s run, instead of local sidecars.
	Kubeconfig, Context string
	// Meshes are mesh-ladder's cluster meshes (default istio), each beside
	// the same pods' uncaptured port as its baseline. "sidecar" is loadgen's
	// own sidecar mesh with each proxy in turn, "sidecar:haproxy" one.
	Meshes []string
	// ProxyImages are the sidecar meshes' images by proxy (k8s run's
	// --proxy-image); a proxy without one runs its official image.
	ProxyImages map[string]string
	// SameNodeOK lets a cluster step's workers share the target's node
	// (k8s run's --same-node-ok): a one-node cluster.
	SameNodeOK bool
	// Prometheus is the cost source of a cluster step (k8s run's
	// --prometheus); empty: metrics.k8s.io.
	Prometheus string
	// Ladder and Payloads replace mesh-ladder's own (c1t1..c128t128; 100
	// and 1MiB, and 1KiB on a cluster), as the machine allows.
	Ladder, Payloads string
	// Workers are the pods of each cluster step's Indexed Job.
	Workers int
	// Image is the loadgen image of a cluster step (k8s run's and k8s
	// paths' --image); empty: theirs.
	Image string
	// Repeats are the samples of every step (0: the study's own). With
	// one, an ordering's noise cannot be told from its gap.
	Repeats int
	// Tolerance (default 10%) is k8s-paths': how far below hostNetwork a
	// pod path may fall.
	Tolerance string
	// CNI names the datapath of the cluster cni-matrix runs on, as the
	// lab's modes are named (macvlan, vxlan, host-gw …): its rows are
	// that mode's.
	CNI string
}

// OnCluster tells whether the options run the study on a cluster.
func (o Options) OnCluster() bool { return o.Kubeconfig != "" || o.Context != "" }

// Study is one published study.
type Study struct {
	Name   string
	Title  string
	Method string // one paragraph: what the study did and what the plan does
	Needs  []Need
	// Duration is the study's own per-step duration.
	Duration time.Duration
	// Repeats are the study's own samples of every step (0 is 1): enough
	// to tell an ordering from noise where the study is short.
	Repeats int
	// plan is the steps for a duration and options whose Repeats is set.
	plan func(d time.Duration, o Options) []Step
	// Later is set for a study only partly planned yet: what is missing.
	Later string
	// Cluster marks a study that can run on a cluster (Options.OnCluster):
	// it then needs the cluster instead of Needs.
	Cluster bool
	// Ours says, for a study that published a method and no figures, that
	// the table printed is ours alone.
	Ours string
	// PathsTable marks a study whose table is its k8s paths step's own
	// (paths.json), not published figures beside ours.
	PathsTable bool
	// CostColumns marks a study whose table can add what each worker count
	// costs a month (study --cpu-price).
	CostColumns bool
	// SideRows marks a study whose table adds each sidecar side's rows.
	SideRows bool
}

// NeedsFor is what the study needs with these options.
func (s Study) NeedsFor(o Options) []Need {
	if s.Cluster && o.OnCluster() {
		return []Need{NeedCluster}
	}
	return s.Needs
}

// Plan is the study's steps with these options.
func (s Study) Plan(o Options) []Step {
	d := s.Duration
	if o.Duration > 0 {
		d = o.Duration
	}
	o.Repeats = s.RepeatsFor(o)
	return s.plan(d, o)
}

// RepeatsFor is the samples of every step with these options.
func (s Study) RepeatsFor(o Options) int {
	switch {
	case o.Repeats > 0:
		return o.Repeats
	case s.Repeats > 0:
		return s.Repeats
	}
	return 1
}

// repeatArgs passes the repeats on to a step's command, when more than one.
func repeatArgs(o Options) []string {
	if o.Repeats > 1 {
		return []string{"--repeats", strconv.Itoa(o.Repeats)}
	}
	return nil
}

// Published returns the study's published figures, if the repository
// holds any.
func (s Study) Published() (Published, bool, error) { return PublishedFor(s.Name) }

// All returns every study, in the order `loadgen study list` prints them.
func All() []Study { return append([]Study(nil), studies...) }

// Lookup finds a study by name.
func Lookup(name string) (Study, error) {
	for _, s := range studies {
		if s.Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range studies {
		names = append(names, s.Name)
	}
	return Study{}, fmt.Errorf("no study %q: there are %s (loadgen study list)", name, strings.Join(names, ", "))
}

// NeedsText lists what the study needs, "nothing but loadgen" when none.
func (s Study) NeedsText() string { return needsText(s.Needs, s.Cluster) }

// NeedsTextFor is NeedsFor in words.
func (s Study) NeedsTextFor(o Options) string { return needsText(s.NeedsFor(o), false) }

func needsText(needs []Need, cluster bool) string {
	if len(needs) == 0 {
		return "nothing but loadgen"
	}
	var parts []string
	for _, n := range needs {
		parts = append(parts, string(n))
	}
	if cluster && !slices.Contains(needs, NeedCluster) {
		return strings.Join(parts, ", ") + " (or a cluster: --kubeconfig)"
	}
	return strings.Join(parts, ", ")
}

func dur(d time.Duration) string { return d.String() }

// cniModes are the lab modes of the CNI report (and those the lab has
// beyond it); the lab skips the ones this kernel lacks.
var cniModes = "host-gw,vxlan,bridge,macvlan,ebpf,udp,ipip,geneve"

// CNIModes are the lab's CNI modes, the names a cluster's datapath takes
// in cni-matrix (its --cni).
func CNIModes() []string { return strings.Split(cniModes, ",") }

var studies = []Study{
	{
		Name:  "cni-matrix",
		Title: "Cilium / Calico / Macvlan / SR-IOV CNI report: nine paths × CNI modes",
		Method: "netperf TCP_STREAM (-m 1024), TCP_RR and TCP_CRR (-r 1024), one connection, 60 s each, over the nine paths " +
			"(node↔node, pod↔own node, pod↔other node, pod↔pod same/other node, node/pod→Service with the endpoint local/remote) " +
			"for every CNI mode the lab builds here.",
		Needs:    []Need{NeedRoot},
		Duration: 60 * time.Second,
		Cluster:  true,
		plan: func(d time.Duration, o Options) []Step {
			if o.OnCluster() {
				return []Step{cniClusterStep(d, o)}
			}
			return []Step{{Name: "lab: every mode × nine paths, TCP_STREAM/RR/CRR", Dir: "lab", Args: append([]string{
				"lab", "--modes", cniModes, "--protocols", "tcp-rr,tcp-crr,tcp-stream",
				"--size", "1KiB", "--stream-size", "1KiB", "--ladder", "c1t1", "-d", dur(d), "--warmup", "1s"}, repeatArgs(o)...)}}
		},
	},
	{
		Name:  "flannel-backends",
		Title: "Flannel backends: pod-to-pod bandwidth of direct, host-gw, vxlan and udp",
		Method: "iperf-style TCP stream, one connection, pod to pod across the two nodes for Flannel's host-gw, vxlan and udp backends, and node to node (direct). " +
			"With --kubeconfig, on a cluster running Flannel: loadgen k8s paths per backend (hostNetwork and pod to pod across nodes, 128 KiB writes), " +
			"each step refusing a cluster whose nodes run another backend: switch the backend and --resume.",
		Needs:    []Need{NeedRoot},
		Duration: 10 * time.Second,
		Repeats:  3,
		Cluster:  true,
		plan: func(d time.Duration, o Options) []Step {
			if o.OnCluster() {
				return flannelClusterSteps(d, o)
			}
			return []Step{{Name: "lab: host-gw, vxlan, udp; node-node and pod-pod-other-node, TCP stream", Dir: "lab", Args: append([]string{
				"lab", "--modes", "host-gw,vxlan,udp", "--paths", "node-node,pod-pod-other-node", "--protocols", "tcp-stream",
				"--stream-size", "128KiB", "--ladder", "c1t1", "-d", dur(d), "--warmup", "1s"}, repeatArgs(o)...)}}
		},
	},
	{
		Name:  "vpc-cni-grpc",
		Title: "Amazon VPC CNI vs Calico vs Weave: gRPC ping-pong messages/s, one node and two",
		Method: "gRPC streaming ping-pong, one message in flight (c1t1), messages/s counting both directions, pod to pod on one node and across two, " +
			"for the modes that carry those CNIs' packets: host-gw (VPC CNI's routed veths), ipip (Calico), vxlan (Weave).",
		Needs:    []Need{NeedRoot},
		Duration: 30 * time.Second,
		Repeats:  3,
		plan: func(d time.Duration, o Options) []Step {
			return []Step{{Name: "lab: gRPC ping-pong pod-pod same and other node", Dir: "lab", Args: append([]string{
				"lab", "--modes", "host-gw,ipip,vxlan", "--paths", "pod-pod-same-node,pod-pod-other-node", "--protocols", "grpc-stream",
				"--size", "1KiB", "--ladder", "c1t1", "-d", dur(d), "--warmup", "1s"}, repeatArgs(o)...)}}
		},
	},
	{
		Name:  "nginx-sizing",
		Title: "NGINX Ingress sizing: RPS and SSL TPS per worker_processes, with cost",
		Method: "wrk-style closed loop against a real nginx per worker_processes 1, 2, 4 … up to the CPUs: 1 KiB responses on kept connections (RPS) " +
			"and RSA-2048 TLS with a new connection per request (SSL TPS), 180 s each.",
		Needs:       []Need{NeedNginx},
		Duration:    180 * time.Second,
		CostColumns: true,
		plan: func(d time.Duration, o Options) []Step {
			return []Step{{Name: "size: nginx per worker count", Dir: "size", Args: append([]string{
				"size", "--workers", workerLadder(o.CPUs), "--payload", "1KiB", "--key-type", "rsa", "-d", dur(d)}, repeatArgs(o)...)}}
		},
	},
	{
		Name:  "mesh-ladder",
		Title: "Sidecar ladder: the same pods without a sidecar vs local nginx, HAProxy and Caddy sidecars, c1t1…c128t128 × 100 B and 1 MB",
		Method: "The method of \"Benchmark for Istio & AWS App Mesh\" (wrk → httpbin over the ladder c1t1, c2t2 … c128t128 with 100 B and 1 MB bodies: " +
			"latency, throughput and the sidecars' CPU and memory against a baseline without a mesh), run here on local sidecars, not on Istio or App Mesh: " +
			"the same pods without a sidecar (sidecar:none) beside every installed sidecar profile on both sides, Istio-style " +
			"(nginx, HAProxy, Caddy; Envoy where an envoy binary is installed). With --kubeconfig, on the cluster: loadgen k8s run per mesh " +
			"(--meshes, default istio), each through the mesh beside the same pods' uncaptured port. The table sets beside ours what Istio, " +
			"Linkerd and that study published.",
		Needs:    []Need{NeedRoot, NeedNginx},
		Duration: 30 * time.Second,
		Cluster:  true,
		SideRows: true,
		plan: func(d time.Duration, o Options) []Step {
			if o.OnCluster() {
				return clusterLadder(d, o)
			}
			ladder, payloads := o.ladder()
			args := []string{"sweep", "--ladder", ladder, "--payloads", payloads, "-d", dur(d),
				"--path", "baseline=sidecar:none"}
			for _, p := range SidecarProfiles() {
				args = append(args, "--path", p+"=sidecar:"+p+",mode=both")
			}
			args = append(args, repeatArgs(o)...)
			return []Step{{Name: "sweep: baseline and each sidecar over the ladder", Dir: "sweep", Args: args}}
		},
	},
	{
		Name:  "k8s-paths",
		Title: "k8s-netperf's paths: hostNetwork, pod, ClusterIP, NodePort and across nodes, each against hostNetwork",
		Method: "k8s-netperf (cloud-bulldozer/k8s-netperf): netperf TCP_STREAM, TCP_RR and TCP_CRR, 1024-byte messages, one connection, " +
			"10 s per sample and 3 samples, between hostNetwork pods (the baseline), pod to pod on one node and across two, pod to a " +
			"ClusterIP Service and to a NodePort, failing a run whose pod path falls further below hostNetwork than --tcp-tolerance (10%). " +
			"Here: loadgen k8s paths, loadgen's own client and servers in pods, and HTTP/1.1 beside the three; the kube-proxy mode is recorded.",
		Needs:      []Need{NeedCluster},
		Duration:   10 * time.Second,
		Repeats:    3,
		Cluster:    true,
		Ours:       "k8s-netperf publishes a method, not figures: the table is ours alone, each pod path as a ratio to hostNetwork on this cluster",
		PathsTable: true,
		plan:       func(d time.Duration, o Options) []Step { return []Step{pathsStep(d, o)} },
	},
}

// FlannelBackends are the backends flannel-backends measures, in the
// order of its rows.
var FlannelBackends = []string{"host-gw", "vxlan", "udp"}

// flannelClusterSteps are flannel-backends on a cluster: a k8s paths per
// Flannel backend, node to node and pod to pod across nodes with the
// lab's 128 KiB writes, into k8s-BACKEND; each refuses a cluster whose
// nodes run another backend (its --flannel-backend), so that a run
// measures the backend the cluster runs and --resume, after the backend
// is switched, the next. A tolerance of 99%: the study's verdicts are its
// orderings, not k8s-netperf's tolerance.
func flannelClusterSteps(d time.Duration, o Options) []Step {
	var steps []Step
	for _, b := range FlannelBackends {
		args := []string{"k8s", "paths", "-n", "loadgen-flannel", "--paths", "pod-pod-other-node", "--tests", "tcp-stream",
			"--stream-size", "128KiB", "--flannel-backend", b, "-d", dur(d), "--repeats", strconv.Itoa(max(o.Repeats, 1)), "--tolerance", "99%"}
		args = append(args, clusterArgs(o)...)
		steps = append(steps, Step{Name: "k8s paths on Flannel " + b + ": node ↔ node and pod ↔ pod across nodes, TCP stream", Dir: "k8s-" + b,
			Args: args, Whole: true})
	}
	return steps
}

// cniClusterStep is cni-matrix's step on a cluster: loadgen k8s paths
// with the study's 1 KiB messages, TCP_STREAM, TCP_RR and TCP_CRR (and
// HTTP/1.1) on every path, the cluster's datapath named by --cni (or its
// Flannel backend), into k8s-CNI. A study of several CNIs runs it once on
// each (with --resume into one directory).
func cniClusterStep(d time.Duration, o Options) Step {
	name := o.CNI
	if name == "" {
		name = "cluster"
	}
	args := []string{"k8s", "paths", "-n", "loadgen-cni", "--tests", "tcp-stream,tcp-rr,tcp-crr,http",
		"-d", dur(d), "--repeats", strconv.Itoa(max(o.Repeats, 1)), "--tolerance", "99%"}
	if o.CNI != "" {
		args = append(args, "--cni", o.CNI)
	}
	args = append(args, clusterArgs(o)...)
	return Step{Name: "k8s paths on the cluster's " + name + ": every path × TCP_STREAM, TCP_RR, TCP_CRR, HTTP/1.1", Dir: "k8s-" + name,
		Args: args, Whole: true}
}

// pathsStep is k8s-paths' one step: loadgen k8s paths with the study's
// duration, repeats and tolerance.
func pathsStep(d time.Duration, o Options) Step {
	repeats, tol := max(o.Repeats, 1), o.Tolerance
	if tol == "" {
		tol = "10%"
	}
	args := []string{"k8s", "paths", "-n", "loadgen-paths", "-d", dur(d), "--repeats", strconv.Itoa(repeats), "--tolerance", tol}
	args = append(args, clusterArgs(o)...)
	return Step{Name: "k8s paths: every path × TCP_STREAM, TCP_RR, TCP_CRR and HTTP/1.1, as a ratio to hostNetwork", Dir: "k8s-paths",
		Args: args, Whole: true}
}

// clusterArgs are the cluster options a cluster step passes on.
func clusterArgs(o Options) []string {
	var a []string
	if o.Kubeconfig != "" {
		a = append(a, "--kubeconfig", o.Kubeconfig)
	}
	if o.Context != "" {
		a = append(a, "--context", o.Context)
	}
	if o.Image != "" {
		a = append(a, "--image", o.Image)
	}
	return a
}

// ladderFile is mesh-ladder's sweep on a cluster: through the mesh (the
// target's captured port) and beside it the same pods' uncaptured port,
// the baseline, over the study's ladder and payloads.
func ladderFile(d time.Duration, o Options) string {
	ladder, payloads := o.ladder()
	s := fmt.Sprintf(`# mesh-ladder on a cluster (loadgen study): the mesh beside the same pods uncaptured
paths:
  - {name: mesh,   url: "http://target:8080"}
  - {name: direct, url: "http://target:8081", baseline: true}
ladder: %s
payloads: [%s]
duration: %s
`, ladder, strings.ReplaceAll(payloads, ",", ", "), dur(d))
	if o.Repeats > 1 {
		s += fmt.Sprintf("repeats: %d\n", o.Repeats)
	}
	return s
}

// The study's own ladder and payloads; on a cluster 1 KiB too, the size
// Istio publishes its sidecar's cost at: the sidecar rows' table reads
// it beside 100 B.
const (
	StudyLadder     = "c1t1..c128t128"
	StudyPayloads   = "100,1MiB"
	ClusterPayloads = "100,1KiB,1MiB"
)

// ladder is mesh-ladder's ladder and payloads: the options' or the
// study's own.
func (o Options) ladder() (ladder, payloads string) {
	ladder, payloads = StudyLadder, StudyPayloads
	if o.OnCluster() {
		payloads = ClusterPayloads
	}
	if o.Ladder != "" {
		ladder = o.Ladder
	}
	if o.Payloads != "" {
		payloads = o.Payloads
	}
	return ladder, payloads
}

// TableRungs are the rungs mesh-ladder's published tables read: c1t1
// (the latency a proxy adds) and c16t16 (its cost, throughput).
var TableRungs = []int{1, 16}

// MachineLadder is mesh-ladder's ladder for a machine of cpus CPUs that
// carries the generator, both sidecars and the target at once (a
// one-node cluster): the rungs the tables read, then doubling while the
// connections stay within 8 per CPU, up to the study's c128t128. capped
// says in one line what was left out and why; "" for the study's own.
func MachineLadder(cpus int) (ladder, capped string) {
	cpus = max(cpus, 1)
	if 8*cpus >= 128 {
		return StudyLadder, ""
	}
	var rungs []string
	top := 0
	for c := 1; c <= 128; c *= 2 {
		if slices.Contains(TableRungs, c) || (c > TableRungs[len(TableRungs)-1] && c <= 8*cpus) {
			rungs = append(rungs, fmt.Sprintf("c%dt%d", c, c))
			top = c
		}
	}
	ladder = strings.Join(rungs, ",")
	return ladder, fmt.Sprintf("ladder %s of the study's %s: %d CPUs carry the generator, both sidecars and the target, so rungs above c%dt%d (%d connections per CPU) only queue; the rungs between are left out for time (c1t1 and c16t16 are those the tables read)",
		ladder, StudyLadder, cpus, top, top, top/cpus)
}

// SidecarMesh is the --meshes name of loadgen's own sidecar mesh: alone,
// each proxy in turn; "sidecar:PROXY", one.
const SidecarMesh = "sidecar"

// clusterMeshes are the meshes a cluster ladder runs, "sidecar" spelt
// out per proxy.
func (o Options) clusterMeshes() []string {
	if len(o.Meshes) == 0 {
		return []string{"istio"}
	}
	var out []string
	for _, m := range o.Meshes {
		if m == SidecarMesh {
			for _, p := range SidecarProxies {
				out = append(out, SidecarMesh+":"+p)
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// SidecarProxies are the proxies of loadgen's sidecar mesh:
// meshes/k8s.SidecarProxies, from internal/sidecarnames (this layer may
// not import meshes).
var SidecarProxies = sidecarnames.ClusterProxies()

// clusterLadder is a loadgen k8s run per mesh, the same sweep file each;
// the sidecar mesh runs its proxy on both sides.
func clusterLadder(d time.Duration, o Options) []Step {
	workers := max(o.Workers, 1)
	file := OutDir + "/mesh-ladder.yaml"
	var steps []Step
	for _, m := range o.clusterMeshes() {
		name := strings.ReplaceAll(m, ":", "-")
		args := []string{"k8s", "run", "--mesh", m}
		if proxy, ok := strings.CutPrefix(m, SidecarMesh+":"); ok {
			args = []string{"k8s", "run", "--mesh", SidecarMesh, "--proxy", proxy, "--mode", "both"}
			if img := o.ProxyImages[proxy]; img != "" {
				args = append(args, "--proxy-image", img)
			}
		}
		args = append(args, "-f", file, "--workers", strconv.Itoa(workers), "-n", "loadgen-"+name)
		if o.SameNodeOK {
			args = append(args, "--same-node-ok")
		}
		if o.Prometheus != "" {
			args = append(args, "--prometheus", o.Prometheus)
		}
		args = append(args, clusterArgs(o)...)
		steps = append(steps, Step{Name: "k8s run: " + m + " beside the same pods uncaptured, over the ladder", Dir: "k8s-" + name,
			Args: args, Files: map[string]string{"mesh-ladder.yaml": ladderFile(d, o)}, Whole: true})
	}
	return steps
}

// SidecarProfiles are the local sidecar profiles a mesh study sweeps:
// those whose proxy is installed (Envoy has no package here).
func SidecarProfiles() []string {
	var out []string
	for _, p := range []string{"nginx", "haproxy", "caddy", "envoy"} {
		if _, err := exec.LookPath(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// workerLadder is 1, 2, 4 … up to cpus, and cpus itself.
func workerLadder(cpus int) string {
	if cpus < 1 {
		cpus = 1
	}
	var out []string
	for w := 1; w <= cpus; w *= 2 {
		out = append(out, strconv.Itoa(w))
	}
	if last := strconv.Itoa(cpus); !slices.Contains(out, last) {
		out = append(out, last)
	}
	return strings.Join(out, ",")
}
