package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
)

// TestNodeCilium starts two nodes on Cilium's eBPF datapath (issue 41,
// point 2), with VXLAN tunnelling and kube-proxy, then with Cilium's
// kube-proxy replacement and no kube-proxy, and on each:
//
//   - pod ↔ pod across the nodes (TCP_RR, TCP_STREAM) completes, and the
//     stream crossed the nodes' cilium_vxlan devices;
//   - pod → a Service whose endpoint is on the other node completes
//     (k8s paths), which reads the kube-proxy mode the cluster publishes:
//     iptables, or replaced;
//   - each node → a Service (an HTTP GET of its ClusterIP from the node's
//     namespace, in the node's cgroup, where the replacement's socket LB
//     is attached) answers 200;
//   - teardown leaves nothing on the machine, nor the two host-wide
//     sysctls the agents try to write changed.
//
// Cilium is built beforehand by make node-build (13–36 min cold, cached
// with the node's builds).
func TestNodeCilium(t *testing.T) {
	beside(t)
	for _, kpr := range []bool{false, true} {
		name := map[bool]string{false: "vxlan", true: "kube-proxy-replacement"}[kpr]
		t.Run(name, func(t *testing.T) { testNodeCilium(t, kpr) })
	}
}

func testNodeCilium(t *testing.T, kpr bool) {
	takeSeveralNodes(t)
	start := time.Now()
	before := ciliumTraces(t)
	// Registered first, so it runs after startNodes' teardown.
	t.Cleanup(func() {
		if after := ciliumTraces(t); !slices.Equal(before, after) {
			t.Errorf("Cilium's traces on the machine after the teardown differ:\nbefore: %q\nafter:  %q", before, after)
		}
	})
	n := startNodes(t, node.Config{Dir: flannelDir, Nodes: 2, CNI: node.CNICilium, KubeProxyReplacement: kpr})
	ctx := context.Background()
	bin := buildLoadgen(t)
	var kubeProxies []string
	for _, p := range n.Components() {
		if strings.HasPrefix(p.Name, "kube-proxy") {
			kubeProxies = append(kubeProxies, p.Name)
		}
	}
	if kpr != (len(kubeProxies) == 0) {
		t.Errorf("kube-proxy replacement %v, kube-proxies running: %v", kpr, kubeProxies)
	}
	wantMode := map[bool]string{false: node.ProxyIPTables, true: paths.ProxyModeReplaced}[kpr]

	measure := func(t *testing.T, path, tests string) *paths.Table {
		tab := pathsAcross(t, n, bin, fmt.Sprintf("cilium, kpr %v", kpr), "cilium-paths", "--paths", path, "--tests", tests)
		if tab.KubeProxy.Mode != wantMode {
			t.Errorf("k8s paths read kube-proxy mode %q (%s%s), want %s", tab.KubeProxy.Mode, tab.KubeProxy.Source, tab.KubeProxy.Why, wantMode)
		}
		return tab
	}

	t.Run("pod-pod", func(t *testing.T) {
		before := nodesDevBytes(t, n, "cilium_vxlan")
		tab := measure(t, paths.PodPodOtherNode, paths.TestTCPRR+","+paths.TestTCPStream)
		after := nodesDevBytes(t, n, "cilium_vxlan")
		var sent float64
		for _, row := range tab.Rows {
			if row.Test == paths.TestTCPStream && row.Path == paths.PodPodOtherNode && row.Median != nil {
				sent = *row.Median * 1e9 / 8 * tab.DurationSeconds
			}
		}
		tx := after[tab.Nodes.Other][1] - before[tab.Nodes.Other][1]
		rx := after[tab.Nodes.Server][0] - before[tab.Nodes.Server][0]
		if sent == 0 || float64(tx) < 0.9*sent || float64(rx) < 0.9*sent {
			t.Errorf("cilium_vxlan: %d bytes out of %s, %d into %s; the pods' stream sent %.0f: it did not go through the tunnel", tx, tab.Nodes.Other, rx, tab.Nodes.Server, sent)
		}
		t.Logf("cilium_vxlan: %d MB out of %s, %d MB into %s (the pods' stream: %.0f MB)", tx>>20, tab.Nodes.Other, rx>>20, tab.Nodes.Server, sent/(1<<20))
	})

	t.Run("pod-service", func(t *testing.T) {
		measure(t, paths.PodClusterIPOther, paths.TestTCPRR+","+paths.TestTCPStream)
	})

	t.Run("node-service", func(t *testing.T) {
		startEcho(t, n, "cilium-echo")
		svc, err := n.Client.CoreV1().Services("cilium-echo").Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + svc.Spec.ClusterIP + ":8080/healthz"
		for _, m := range n.Members {
			if !kpr {
				// kube-proxy programs the Service's endpoint a moment after
				// the pod is Ready (until then its rule rejects): wait for
				// the DNAT to the endpoint in this node's nat table.
				waitKubeProxyEndpoint(t, ctx, n, m, "cilium-echo", "echo")
			} else {
				// So does the agent, into its BPF maps (until then the
				// socket LB refuses at once: one run's curl failed 3 s
				// after the Service was made, on a busy machine).
				waitCiliumService(t, ctx, n, m, svc.Spec.ClusterIP, 8080)
			}
			// In the node's cgroup (the kubelet's root), as its hostNetwork
			// pods are: the replacement's socket LB is attached there only.
			cg := filepath.Join("/sys/fs/cgroup/unified", m.CgroupRoot, "cgroup.procs")
			out, err := m.Run(ctx, "sh", "-c", `echo $$ > `+cg+` && exec curl -sS -o /dev/null -w '%{http_code}' --max-time 10 `+url)
			if err != nil || strings.TrimSpace(out) != "200" {
				t.Errorf("%s → the Service %s: %q, %v\n%s", m.Name, url, out, err, n.Logs(10))
			}
		}
	})
	t.Logf("TestNodeCilium (kpr %v) took %v (its start and teardown: the rest)", kpr, time.Since(start).Round(time.Second))
}

// ciliumTraces are what Cilium's agents could leave in the host: its
// links, mounts, /run/cilium, the nodes' cgroup2 subtrees, and the two
// host-wide sysctls they try to write (read-only to them).
func ciliumTraces(t *testing.T) []string {
	t.Helper()
	var out []string
	ours := regexp.MustCompile(`cilium|lxc[0-9a-f]`)
	links, err := exec.Command("ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link: %v: %s", err, links)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for what, text := range map[string]string{"link": string(links), "mount": string(mi)} {
		for _, l := range strings.Split(text, "\n") {
			if ours.MatchString(l) {
				out = append(out, what+": "+strings.TrimSpace(l))
			}
		}
	}
	if _, err := os.Stat("/run/cilium"); err == nil {
		out = append(out, "/run/cilium exists")
	}
	ents, _ := os.ReadDir("/sys/fs/cgroup/unified")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), node.MemberPrefix) {
			out = append(out, "cgroup unified/"+e.Name())
		}
	}
	for _, s := range []string{"kernel/timer_migration", "kernel/unprivileged_bpf_disabled"} {
		b, _ := os.ReadFile("/proc/sys/" + s)
		out = append(out, s+"="+strings.TrimSpace(string(b)))
	}
	slices.Sort(out)
	return out
}

// waitCiliumService waits until the member's agent has realized the
// Service frontend ip:port with an active backend in its BPF maps.
func waitCiliumService(t *testing.T, ctx context.Context, n *node.Node, m node.Member, ip string, port int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := n.CiliumServiceRealized(ctx, m, ip, port)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's Cilium agent has not realized the Service %s:%d with a backend in a minute (%v)\n%s", m.Name, ip, port, err, n.Logs(10))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitKubeProxyEndpoint waits until kube-proxy's nat table in the member's
// namespace DNATs to every endpoint of the Service ns/name (its
// EndpointSlices' addresses).
func waitKubeProxyEndpoint(t *testing.T, ctx context.Context, n *node.Node, m node.Member, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var want []string
		if sl, err := n.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name}); err == nil {
			for _, es := range sl.Items {
				for _, ep := range es.Endpoints {
					want = append(want, ep.Addresses...)
				}
			}
		}
		nat, err := m.Run(ctx, "iptables-save", "-t", "nat")
		ok := err == nil && len(want) > 0
		for _, ip := range want {
			ok = ok && strings.Contains(nat, "--to-destination "+ip+":")
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: kube-proxy has no DNAT to %s/%s's endpoints %v after a minute (%v)", m.Name, ns, name, want, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
