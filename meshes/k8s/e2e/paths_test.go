package e2e

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/store"
)

// TestNodePaths runs `loadgen study k8s-paths` on the real node, with
// kube-proxy in nftables mode (not the node's default, so a mode recorded
// is read, not assumed; TestNodeRun has both modes): the hostNetwork and pod servers and every client Job
// placed on the one schedulable node by the real scheduler, the pods
// reaching each other by the node's IP, the pod IP, the ClusterIP and the
// NodePort through the kube-proxy mode that runs; every path × test has
// figures, the cross-node rows say they cannot be measured on one node,
// the recorded kube-proxy mode is the one running, the ratios are to the
// host row, the verdicts are k8s-netperf's rule's (nothing judged on one
// node) and the exit status follows them, nothing labelled is left.
func TestNodePaths(t *testing.T) {
	n := testNode(t)
	bin := buildLoadgen(t)
	iptablesAfter(t, n)
	recorded := map[string]string{}
	// 10% fails the run wherever a pod path is slower than host by more
	// (the exit status must follow the verdicts either way).
	for _, c := range []struct{ mode, tolerance string }{{node.ProxyNFTables, "10%"}} {
		t.Run(c.mode, func(t *testing.T) {
			useProxyMode(t, n, c.mode)
			running := c.mode
			dir := filepath.Join(t.TempDir(), "study")
			r := runLoadgen(t, bin, n.Kubeconfig, 8*time.Minute, "study", "k8s-paths", "--kubeconfig", n.Kubeconfig,
				"--image", n.Image, "-d", "2s", "--repeats", "2", "--tolerance", c.tolerance, "-o", dir, "-q")
			t.Logf("loadgen study k8s-paths (kube-proxy %s, tolerance %s): exit %d\n%s", c.mode, c.tolerance, r.code, r.stdout)
			tab, err := paths.ReadTable(filepath.Join(dir, "k8s-paths"))
			if err != nil {
				t.Fatalf("%v\n%s", err, r)
			}
			checkPathsTable(t, tab, running, c.tolerance, r)
			recorded[c.mode] = tab.KubeProxy.Mode
			for _, want := range []string{"not measurable here: one schedulable node", "publishes a method, not figures", "kube-proxy: " + running} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the study's printout lacks %q", want)
				}
			}
			// Each test's results directory holds every measurement's run.
			for _, test := range paths.Tests {
				if test.OptIn {
					continue // UDP: TestNodePathsUDP
				}
				man, steps, err := store.ReadSweep(filepath.Join(dir, "k8s-paths", test.Name))
				if err != nil {
					t.Fatal(err)
				}
				if len(man.Paths) != 4 || len(steps) != 4*2 || man.Baseline != paths.HostHost {
					t.Errorf("%s: paths %v, %d steps, baseline %q; want 4 paths × 2 repeats", test.Name, man.Paths, len(steps), man.Baseline)
				}
				for _, st := range steps {
					if st.Run == nil || st.Run.Config.Protocol != test.Protocol || st.Run.Config.Connections != test.Connections {
						t.Errorf("%s %s: %+v", test.Name, st.ID, st.Failed)
					}
				}
			}
			if rep := runLoadgen(t, bin, n.Kubeconfig, time.Minute, "report", dir); rep.code != 0 || !strings.Contains(rep.stdout, "CNI path matrix") {
				t.Errorf("loadgen report: %v", rep)
			}
			assertNothingLeft(t, n.Client, tab.Namespace, tab.RunID)
		})
	}
	if recorded[node.ProxyNFTables] != node.ProxyNFTables {
		t.Errorf("recorded kube-proxy mode %v: want nftables", recorded)
	}
}

// checkPathsTable checks a one-node table against what was run: figures
// for every path × test, the cross-node rows not measurable, the mode
// kube-proxy says it runs, the ratios to the host row, the verdicts and
// the exit status by the tolerance.
func checkPathsTable(t *testing.T, tab *paths.Table, running, tolerance string, r result) {
	t.Helper()
	if tab.KubeProxy.Mode != running || !strings.Contains(tab.KubeProxy.Source, "ConfigMap kube-system/kube-proxy (config.conf mode: "+running+")") {
		t.Errorf("kube-proxy %+v, want %s read from the ConfigMap kube-system/kube-proxy the node publishes as kubeadm does", tab.KubeProxy, running)
	}
	if tab.Nodes.Server != node.NodeName || tab.Nodes.Other != "" || len(tab.Nodes.Schedulable) != 1 {
		t.Errorf("nodes %+v", tab.Nodes)
	}
	tol := map[string]float64{"10%": 0.10, "99%": 0.99}[tolerance]
	if tab.Tolerance != tol || tab.Repeats != 2 || tab.DurationSeconds != 2 {
		t.Errorf("tolerance %g, repeats %d, duration %gs", tab.Tolerance, tab.Repeats, tab.DurationSeconds)
	}
	if len(tab.Rows) != 7*4 {
		t.Fatalf("%d rows, want 7 paths × 4 tests", len(tab.Rows))
	}
	host := map[string]float64{}
	for _, row := range tab.Rows {
		if row.Path == paths.HostHost && row.Median != nil {
			host[row.Test] = *row.Median
		}
	}
	below := false
	for _, row := range tab.Rows {
		name := row.Path + " " + row.Test
		if row.Path == paths.HostHostOther || row.Path == paths.PodPodOtherNode || row.Path == paths.PodClusterIPOther {
			if row.Verdict != paths.VerdictNotMeasurable || row.Note != paths.NotMeasurableOneNode || len(row.Figures) != 0 {
				t.Errorf("%s: %s %q, want not measurable on one node", name, row.Verdict, row.Note)
			}
			continue
		}
		if len(row.Figures) != 2 || len(row.Failures) > 0 || row.Median == nil {
			t.Errorf("%s: figures %v, failures %v", name, row.Figures, row.Failures)
			continue
		}
		for _, f := range row.Figures {
			if !(f > 0) {
				t.Errorf("%s: figure %g", name, f)
			}
		}
		if row.Path == paths.HostHost {
			if row.Verdict != paths.VerdictBaseline || row.Ratio != nil {
				t.Errorf("%s: %s, ratio %v: want the baseline", name, row.Verdict, row.Ratio)
			}
			continue
		}
		want := *row.Median / host[row.Test]
		if row.Baseline != paths.HostHost || row.Ratio == nil || math.Abs(*row.Ratio-want) > 1e-9*want {
			t.Errorf("%s: ratio %v to %s, want %g (its median over host-host's)", name, row.Ratio, row.Baseline, want)
			continue
		}
		// k8s-netperf's rule (the default): TCP_STREAM, pod ↔ pod across
		// nodes; on one node no row is judged, each keeps its ratio.
		wantVerdict := paths.VerdictNotJudged
		if paths.Judged(tab.Judge, paths.PathSpec{Name: row.Path, Baseline: row.Baseline}, row.Test) {
			wantVerdict = paths.VerdictOK
			if want < 1-tol-1e-12 {
				wantVerdict, below = paths.VerdictBelow, true
			}
		}
		if row.Verdict != wantVerdict {
			t.Errorf("%s: ratio %.3f, verdict %s, want %s at %s (judge %s)", name, want, row.Verdict, wantVerdict, tolerance, tab.Judge)
		}
	}
	if tab.Judge != paths.JudgeNetperf || !strings.Contains(r.stdout, "no row is judged here") {
		t.Errorf("judge %q: want k8s-netperf's rule, and the printout to say no row is judged on one node", tab.Judge)
	}
	wantCode := 0
	if below {
		wantCode = 1
	}
	if r.code != wantCode || tab.Passed != !below {
		t.Errorf("exit %d, passed %v; want exit %d (a pod row below the tolerance: %v)\n%s", r.code, tab.Passed, wantCode, below, r.stderr)
	}
	if tolerance == "99%" && r.code != 0 {
		t.Errorf("at 99%% every measured path passes; exit %d", r.code)
	}
}

// assertNothingLeft checks that the run's namespace is gone and no object
// carries its label, anywhere.
func assertNothingLeft(t *testing.T, c kubernetes.Interface, ns, runID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s: %v, want it gone", ns, err)
	}
	sel := metav1.ListOptions{LabelSelector: k8s.Selector(runID)}
	var left []string
	add := func(kind string, names []metav1.ObjectMeta, err error) {
		if err != nil {
			t.Errorf("list %s: %v", kind, err)
		}
		for _, m := range names {
			left = append(left, kind+" "+m.Namespace+"/"+m.Name)
		}
	}
	nss, err := c.CoreV1().Namespaces().List(ctx, sel)
	add("Namespace", metas(nss.Items, func(x corev1.Namespace) metav1.ObjectMeta { return x.ObjectMeta }), err)
	pods, err := c.CoreV1().Pods("").List(ctx, sel)
	add("Pod", metas(pods.Items, func(x corev1.Pod) metav1.ObjectMeta { return x.ObjectMeta }), err)
	svcs, err := c.CoreV1().Services("").List(ctx, sel)
	add("Service", metas(svcs.Items, func(x corev1.Service) metav1.ObjectMeta { return x.ObjectMeta }), err)
	jobs, err := c.BatchV1().Jobs("").List(ctx, sel)
	add("Job", metas(jobs.Items, func(x batchv1.Job) metav1.ObjectMeta { return x.ObjectMeta }), err)
	if len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

func metas[T any](items []T, meta func(T) metav1.ObjectMeta) []metav1.ObjectMeta {
	var out []metav1.ObjectMeta
	for _, x := range items {
		out = append(out, meta(x))
	}
	return out
}

// TestNodePathsOptIn runs `loadgen k8s paths --tests udp-stream,udp-rr,mtls`
// on the real node, the tests a default run leaves out. UDP: `loadgen serve
// udp` in the pod network and in the node's, reached by the pod IP, the
// ClusterIP (a Service port of protocol UDP, through kube-proxy's UDP
// rules) and the NodePort; every run's datagrams were counted, sink and
// echo alike. mTLS: servers that require a client certificate from the
// run's CA answered every request of every path (without the certificate
// in the workers' Secret, every request fails).
func TestNodePathsOptIn(t *testing.T) {
	n := testNode(t)
	bin := buildLoadgen(t)
	dir := filepath.Join(t.TempDir(), "paths")
	r := runLoadgen(t, bin, n.Kubeconfig, 8*time.Minute, "k8s", "paths", "-n", "node-paths-udp", "-d", "2s", "--repeats", "1",
		"--tests", paths.TestUDPStream+","+paths.TestUDPRR+","+paths.TestMTLS, "--paths", paths.PodPodSameNode+","+paths.PodClusterIP+","+paths.PodNodePort,
		"--image", n.Image, "-o", dir, "--run-id", "udpp", "-q")
	tab, err := paths.ReadTable(dir)
	if err != nil {
		t.Fatalf("%v\n%v", err, r)
	}
	measured := 0
	for _, row := range tab.Rows {
		if row.Test != paths.TestUDPStream && row.Test != paths.TestUDPRR && row.Test != paths.TestMTLS {
			t.Errorf("row %s %s: only UDP and mTLS were asked", row.Path, row.Test)
		}
		if row.Median == nil || *row.Median <= 0 {
			t.Errorf("%s %s: no figure: %v", row.Path, row.Test, row.Failures)
			continue
		}
		measured++
	}
	if measured != 4*3 {
		t.Errorf("%d rows measured, want 4 paths (host-host with them) × 2 UDP tests and mTLS\n%v", measured, r)
	}
	for _, test := range []string{paths.TestUDPStream, paths.TestUDPRR} {
		_, steps, err := store.ReadSweep(filepath.Join(dir, test))
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if st.Run == nil || st.Run.Summary.Datagrams == nil || st.Run.Summary.Datagrams.Sent == 0 || st.Run.Summary.Datagrams.Unknown != 0 {
				t.Errorf("%s %s: no datagrams counted: %+v", test, st.ID, st.Failed)
			}
		}
	}
	_, steps, err := store.ReadSweep(filepath.Join(dir, paths.TestMTLS))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Errorf("%d mTLS steps, want one per path", len(steps))
	}
	for _, st := range steps {
		if st.Run == nil || st.Run.Summary.Requests == 0 || st.Run.Summary.Errors.Total() != 0 || !st.Run.Config.TLS {
			t.Errorf("mtls %s: %+v", st.ID, st.Failed)
			continue
		}
		t.Logf("mtls %s: %d requests over mutual TLS, none failed", st.ID, st.Run.Summary.Requests)
	}
	assertNothingLeft(t, n.Client, "node-paths-udp", "udpp")
}
