package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/store"
)

// flannelDir is where the two-node cluster of the tests lives.
const flannelDir = "/var/tmp/loadgen-node-flannel"

// startFlannelCluster starts two nodes, each in a network namespace of
// its own on an underlay, with Flannel's backend as their CNI, and takes
// them down when the test ends, failing it if anything of them is left
// on the machine. A machine that cannot run them skips, but under CI.
func startFlannelCluster(t *testing.T, backend string) *node.Node {
	return startNodes(t, node.Config{Dir: flannelDir, Nodes: 2, CNI: node.CNIFlannel, Backend: backend})
}

// startNodes starts the nodes of cfg (Bins, Flanneld and Log filled in
// here), checking that their teardown leaves the machine as it was. The
// test holds the several nodes' turn (takeSeveralNodes).
func startNodes(t *testing.T, cfg node.Config) *node.Node {
	t.Helper()
	if severalNodes.TryLock() {
		severalNodes.Unlock()
		t.Fatal("startNodes: the test does not hold the several nodes' turn: call takeSeveralNodes(t) first")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	fail := func(format string, a ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, a...)
		}
		t.Skipf("no two-node cluster on this machine: "+format, a...)
	}
	if err := node.Preflight(); err != nil {
		fail("%v", err)
	}
	bins, err := node.Build(ctx, node.BuildOptions{Module: ".", Log: os.Stderr})
	if err != nil {
		fail("building the node: %v", err)
	}
	if cfg.CNI == node.CNIFlannel {
		t0 := time.Now()
		if cfg.Flanneld, err = flanneldBin(); err != nil {
			fail("building flanneld: %v", err)
		}
		t.Logf("flanneld %s: %s (%v)", node.FlannelVersion, cfg.Flanneld, time.Since(t0).Round(100*time.Millisecond))
	}
	if cfg.CNI == node.CNICilium {
		t0 := time.Now()
		if cfg.Cilium, err = node.BuildCilium(ctx, node.BuildOptions{Log: os.Stderr, Nice: true}); err != nil {
			fail("building cilium: %v", err)
		}
		t.Logf("cilium %s: %s (%v)", node.CiliumVersion, cfg.Cilium, time.Since(t0).Round(100*time.Millisecond))
	}
	before := hostTraces(t)
	t0 := time.Now()
	cfg.Bins, cfg.Log = bins, os.Stderr
	n, err := node.Start(ctx, cfg)
	if err != nil {
		fail("%v", err)
	}
	t.Logf("%d nodes with %s %s up in %v", cfg.Nodes, cfg.CNI, cfg.Backend, time.Since(t0).Round(100*time.Millisecond))
	t.Cleanup(func() {
		logs := n.Logs(20)
		if err := n.Stop(); err != nil {
			t.Errorf("the nodes' teardown: %v\n%s", err, logs)
		}
		after := hostTraces(t)
		if node.OneNodeUp() { // it started meanwhile: its sysctls now
			before = slices.DeleteFunc(before, func(s string) bool { return strings.HasPrefix(s, "sysctl ") })
		}
		if !slices.Equal(before, after) {
			t.Errorf("the machine after the nodes' teardown differs:\nbefore: %q\nafter:  %q", before, after)
		}
	})
	return n
}

// hostTraces is what of a cluster of several nodes the host could show:
// its namespaces, the underlay's and Flannel's links and routes, rules
// naming their addresses or chains, the mounts of their namespaces and
// directory, the kubelets' cgroups, the sysctls the components change
// (while the one node is not up).
func hostTraces(t *testing.T) []string {
	t.Helper()
	var out []string
	cmd := func(name string, args ...string) string {
		b, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, b)
		}
		return string(b)
	}
	// Not the one node's (bridge lgnode0, cgroup root loadgen-node, its
	// addresses 198.18.64-65 and 112-127), which earlier node tests leave
	// up, its pods coming and going.
	ours := regexp.MustCompile(`lgnode-|loadgen-node-[0-9]|flannel|FLANNEL|cni0|198\.18\.(7[2-9]|8[0-9]|9[0-5])\.`)
	keep := func(what, text string) {
		for _, l := range strings.Split(text, "\n") {
			if ours.MatchString(l) {
				out = append(out, what+": "+strings.TrimSpace(l))
			}
		}
	}
	keep("netns", cmd("ip", "netns", "list"))
	keep("link", cmd("ip", "-o", "link"))
	keep("addr", cmd("ip", "-o", "addr"))
	keep("route", cmd("ip", "route", "show", "table", "all"))
	for _, tbl := range []string{"filter", "nat", "mangle"} {
		keep("iptables "+tbl, cmd("iptables-save", "-t", tbl))
	}
	keep("nft", cmd("nft", "list", "tables"))
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	keep("mount", string(mi))
	for _, c := range []string{"cpu", "memory", "pids"} {
		ents, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", c))
		for _, e := range ents {
			if ours.MatchString(e.Name()) {
				out = append(out, "cgroup "+c+"/"+e.Name())
			}
		}
	}
	// The host-wide sysctls the kubelets set: the nodes' to put back
	// unless the one node runs (then they are its own, and it may have
	// set them after these nodes saved them).
	if !node.OneNodeUp() {
		for _, s := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"} {
			b, _ := os.ReadFile("/proc/sys/" + s)
			out = append(out, "sysctl "+s+" = "+strings.TrimSpace(string(b)))
		}
	}
	return out
}

// TestNodeFlannel builds two Ready nodes on one machine, each a network
// namespace on an underlay with its own containerd, kubelet, kube-proxy
// and flanneld (vxlan), one control plane on the host. Pods run on each:
// `loadgen k8s run` places its target on one node and its worker on the
// other (required anti-affinity, no --same-node-ok), which reaches the
// target by name (CoreDNS on the host, kube-proxy, Flannel's masquerade);
// `loadgen k8s paths` measures TCP_RR and TCP_STREAM across the nodes —
// hostNetwork to hostNetwork, pod to pod, and pod to a ClusterIP whose
// endpoint is on the other node — and the pods' packets cross the
// nodes through Flannel's VXLAN device; the teardown leaves nothing.
func TestNodeFlannel(t *testing.T) {
	beside(t)
	takeSeveralNodes(t)
	start := time.Now()
	n := startFlannelCluster(t, node.FlannelVXLAN)
	ctx := context.Background()
	bin := buildLoadgen(t)

	nodes, err := n.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cidrs := map[string]bool{}
	for _, nd := range nodes.Items {
		if nd.Annotations[paths.FlannelBackendAnnotation] != node.FlannelVXLAN || nd.Spec.PodCIDR == "" {
			t.Errorf("node %s: podCIDR %q, Flannel backend %q", nd.Name, nd.Spec.PodCIDR, nd.Annotations[paths.FlannelBackendAnnotation])
		}
		cidrs[nd.Spec.PodCIDR] = true
	}
	if len(nodes.Items) != 2 || len(cidrs) != 2 {
		t.Fatalf("%d nodes, pod CIDRs %v: want two nodes, each its own", len(nodes.Items), cidrs)
	}
	for _, m := range n.Members {
		if out, err := m.Run(ctx, "ip", "-4", "route", "show", "default"); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("node %s has a default route: %q %v", m.Name, out, err)
		}
	}

	t.Run("anti-affinity", func(t *testing.T) {
		ns := "flannel-run"
		placed := watchPlacement(t, n.Client, ns)
		dir := filepath.Join(t.TempDir(), "results")
		sweep := writeNodeSweep(t, "ladder: c2t1", "duration: 2s", "warmup: 200ms",
			`paths: [{name: direct, url: "http://target:8081", baseline: true}]`)
		r := runLoadgen(t, bin, n.Kubeconfig, 4*time.Minute, "k8s", "run", "--mesh", "none", "-n", ns, "-f", sweep,
			"--workers", "1", "-o", dir, "--image", n.Image, "--start-lead", "5s", "--target-wait", "90s", "--no-metrics", "--run-id", "flrun")
		if r.code != 0 {
			t.Fatalf("k8s run: %v\n%s", r, n.Logs(10))
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 1 || steps[0].Run == nil || steps[0].Run.Summary.Requests == 0 || !answeredAll(t, steps[0].ID, steps[0].Run.Summary) {
			t.Fatalf("steps %+v", steps)
		}
		if u := steps[0].Run.Config.Target; !strings.Contains(u, k8s.TargetName+"."+ns+".svc.cluster.local:") {
			t.Errorf("the worker loaded %s, not the target's Service name", u)
		}
		got := placed()
		target, workers := got[k8s.TargetName], got[k8s.ClientName]
		if len(target) != 1 || len(workers) != 1 || target[0] == workers[0] {
			t.Errorf("target on %v, workers on %v: want one node each, not the same", target, workers)
		}
		noneLeftOn(t, n.Client, ns)
		t.Logf("target on %v, worker on %v: %s", target, workers, lastLines(r.stderr, 3))
	})

	t.Run("paths", func(t *testing.T) {
		before := nodesDevBytes(t, n, "flannel.1")
		tab := pathsAcross(t, n, bin, "Flannel vxlan", "flannel-paths", "--paths", paths.PodPodOtherNode+","+paths.PodClusterIPOther,
			"--tests", paths.TestTCPRR+","+paths.TestTCPStream, "--flannel-backend", node.FlannelVXLAN)
		if tab.Nodes.Server != node.MemberPrefix+"1" || tab.Nodes.Other != node.MemberPrefix+"2" || tab.Flannel != node.FlannelVXLAN {
			t.Errorf("nodes %+v, Flannel %q", tab.Nodes, tab.Flannel)
		}
		var rows []string
		for _, row := range tab.Rows {
			rows = append(rows, row.Path+" "+row.Test)
			if row.Path != paths.HostHostOther && (row.Ratio == nil || row.Baseline != paths.HostHostOther) {
				t.Errorf("%s %s: ratio %v to %q, want one to %s", row.Path, row.Test, row.Ratio, row.Baseline, paths.HostHostOther)
			}
		}
		want := []string{}
		for _, test := range []string{paths.TestTCPStream, paths.TestTCPRR} {
			for _, p := range []string{paths.HostHostOther, paths.PodPodOtherNode, paths.PodClusterIPOther} {
				want = append(want, p+" "+test)
			}
		}
		if !slices.Equal(rows, want) {
			t.Errorf("rows %v, want %v", rows, want)
		}
		// The pods' packets crossed through the VXLAN devices: what the
		// stream sent (at least) went out of the client node's flannel.1
		// and into the server node's.
		var sent float64
		for _, row := range tab.Rows {
			if row.Test == paths.TestTCPStream && row.Path != paths.HostHostOther && row.Median != nil {
				sent += *row.Median * 1e9 / 8 * tab.DurationSeconds
			}
		}
		after := nodesDevBytes(t, n, "flannel.1")
		client, server := node.MemberPrefix+"2", node.MemberPrefix+"1"
		tx, rx := after[client][1]-before[client][1], after[server][0]-before[server][0]
		if float64(tx) < 0.9*sent || float64(rx) < 0.9*sent {
			t.Errorf("flannel.1 carried %d bytes out of %s and %d into %s; the pods' streams sent %.0f", tx, client, rx, server, sent)
		}
		t.Logf("flannel.1: %d MB out of %s, %d MB into %s (the pods' streams: %.0f MB)", tx>>20, client, rx>>20, server, sent/(1<<20))
	})
	t.Logf("TestNodeFlannel took %v (its start and teardown: the rest)", time.Since(start).Round(time.Second))
}

// nodesDevBytes are each node's received and sent bytes on its device dev
// (flannel.1, cilium_vxlan).
func nodesDevBytes(t *testing.T, n *node.Node, dev string) map[string][2]uint64 {
	t.Helper()
	out := map[string][2]uint64{}
	for _, m := range n.Members {
		rx, tx := devBytes(t, m, dev)
		out[m.Name] = [2]uint64{rx, tx}
	}
	return out
}

// watchPlacement records the node of every pod of a run in ns, by its
// app name label (the target, the workers), as the scheduler places them.
func watchPlacement(t *testing.T, c kubernetes.Interface, ns string) func() map[string][]string {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	seen := map[string]map[string]bool{}
	go func() {
		for ctx.Err() == nil {
			pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				mu.Lock()
				for _, p := range pods.Items {
					app := p.Labels[k8s.LabelName]
					if p.Spec.NodeName == "" || app == "" || p.Status.Phase == corev1.PodPending && p.Status.PodIP == "" {
						continue
					}
					if seen[app] == nil {
						seen[app] = map[string]bool{}
					}
					seen[app][p.Spec.NodeName] = true
				}
				mu.Unlock()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]string{}
		for app, nodes := range seen {
			for nd := range nodes {
				out[app] = append(out[app], nd)
			}
			slices.Sort(out[app])
		}
		return out
	}
}
