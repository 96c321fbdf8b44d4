package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"loadgen/meshes/k8s"
	k8scluster "loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/run"
	"loadgen/results/merge"
	"loadgen/results/store"
)

// TestKubernetes runs loadgen against a real kube-apiserver (embedded
// etcd), the real Job controller and garbage collector, with the test as
// the node's kubelet running the real loadgen binary.
func TestKubernetes(t *testing.T) {
	bin := buildLoadgen(t)
	target := startHTTPBin(t, bin)
	c := startCluster(t)
	installCRDs(t, c.Config)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Worker 1 of the late runs' first step starts 14 s after its pod was
	// created: after the 8 s lead and well past the 1 s limit (the retry's
	// Job, lg-retry-0-a1, on time). The leads are generous so that on-time
	// workers stay on time on a loaded machine. Worker 1 of the stuck run's
	// first step never starts.
	kl := startKubelet(t, ctx, c, bin, map[string]time.Duration{"lg-late-0": 14 * time.Second, "lg-retry-0": 14 * time.Second},
		map[string]string{"lg-stuck-0": "ImagePullBackOff"})
	kubeconfig := writeKubeconfig(t, c, c.Config.Host)

	t.Run("ServerSideValidation", func(t *testing.T) { testValidation(t, c) })
	t.Run("RunMergeCleanup", func(t *testing.T) { testRun(t, c, kl, bin, kubeconfig, target) })
	t.Run("IngressWorkerProcesses", func(t *testing.T) { testIngressWorkers(t, c, bin, kubeconfig, target) })
	t.Run("LateWorker", func(t *testing.T) { testLate(t, c, bin, kubeconfig, target) })
	t.Run("WorkerNeverStarts", func(t *testing.T) { testStuck(t, c, bin, kubeconfig, target) })
	t.Run("WireMismatch", func(t *testing.T) { testWireMismatch(t, c, kl, bin, kubeconfig, target) })
	t.Run("Interrupt", func(t *testing.T) { testInterrupt(t, c, bin, kubeconfig, target) })
	t.Run("CleanupAfterKill", func(t *testing.T) { testCleanupAfterKill(t, c, bin, kubeconfig, target) })
	t.Run("MissingCRDs", func(t *testing.T) { testMissingCRDs(t, c, bin, kubeconfig) })
	t.Run("Unreachable", func(t *testing.T) { testUnreachable(t, c, bin) })
}

// testValidation applies every rendering, each mesh and mode, with strict
// server-side field validation (the Gateway API and Istio kinds checked
// against the CRDs' schemas), then cleans up by label.
func testValidation(t *testing.T, c *cluster) {
	ctx := context.Background()
	kc, err := k8scluster.ConnectConfig(ctx, c.Config, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cases := []k8s.Options{
		{Mesh: k8s.MeshNone}, {Mesh: k8s.MeshIstio}, {Mesh: k8s.MeshIstio, Mode: k8s.ModeServerOnly},
		{Mesh: k8s.MeshIstio, Mode: k8s.ModeClientOnly, MTLS: true, Revision: "1-32"},
		{Mesh: k8s.MeshIstioAmbient}, {Mesh: k8s.MeshIstioWaypoint, MTLS: true},
		{Mesh: k8s.MeshLinkerd}, {Mesh: k8s.MeshLinkerd, Mode: k8s.ModeServerOnly},
		{Mesh: k8s.MeshIngressNginx}, {Mesh: k8s.MeshGateway, Class: "nginx"},
		// Every route kind: the TCPRoute (Gateway API v1) and the gRPC
		// Ingress checked against their schemas too.
		{Mesh: k8s.MeshGateway, Class: "eg", Routes: k8s.RouteKinds},
		{Mesh: k8s.MeshIngressNginx, Routes: []string{k8s.RouteHTTP, k8s.RouteGRPC}},
		// Checked against the App Mesh controller's own CRD schemas.
		{Mesh: k8s.MeshAppMesh}, {Mesh: k8s.MeshAppMesh, Mode: k8s.ModeServerOnly}, {Mesh: k8s.MeshAppMesh, Mode: k8s.ModeClientOnly},
		// A chain of three targets (--hops 3): their Deployments,
		// Services and --mesh sidecar's ConfigMap per hop.
		{Mesh: k8s.MeshIstio, Hops: 3}, {Mesh: k8s.MeshSidecar, Hops: 3},
	}
	// The App Mesh CRDs only for this test: MissingCRDs wants a cluster
	// without them.
	defer installAppMeshCRDs(t, c.Config)()
	for i, o := range cases {
		o.Namespace = fmt.Sprintf("v%d-%s", i, o.Mesh)
		o.RunID = fmt.Sprintf("v%d", i)
		r, err := k8s.Render(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := kc.CheckKinds(o.Mesh, r.Objects); err != nil {
			t.Fatalf("%s: %v", o.Namespace, err)
		}
		if err := kc.Apply(ctx, r.Objects); err != nil {
			t.Fatalf("%s %s: the API server refused a rendered object: %v", o.Mesh, o.Mode, err)
		}
		kinds := map[string]bool{}
		for _, u := range r.Objects {
			kinds[u.GetKind()] = true
		}
		deleted, err := kc.Cleanup(ctx, o.Namespace, o.RunID)
		if err != nil {
			t.Fatal(err)
		}
		// Every rendered object with loadgen's label, and the client Job's
		// pods, and nothing else.
		want := map[string]bool{}
		for _, u := range r.Objects {
			if u.GetLabels()[k8s.LabelManagedBy] == k8s.ManagedBy {
				want[refOf(u)] = true
			}
		}
		for _, d := range deleted {
			if !want[d] && !strings.HasPrefix(d, "Pod "+o.Namespace+"/"+k8s.ClientName+"-") {
				t.Errorf("%s: cleanup deleted %s, which loadgen did not render", o.Namespace, d)
			}
			delete(want, d)
		}
		if len(want) > 0 {
			t.Errorf("%s: cleanup left %v", o.Namespace, want)
		}
		noneLeft(t, c, o.Namespace, k8s.Selector(o.RunID))
		t.Logf("%s %s: %d objects accepted (%v)", o.Mesh, o.Mode, len(r.Objects), sortedKeys(kinds))
	}
	// Without --configure-controller nothing outside the run's namespace is
	// rendered: the ingress controller's ConfigMap was never made.
	if _, err := c.Client.CoreV1().ConfigMaps("ingress-nginx").Get(ctx, "ingress-nginx-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ingress-nginx rendering reached the controller's namespace: ConfigMap ingress-nginx-controller: %v", err)
	}
	// Strictness is the server's: an unknown field in a Gateway is refused.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "bad", "namespace": "ingress-nginx"},
		"spec":     map[string]any{"gatewayClassName": "x", "listeners": []any{map[string]any{"name": "a", "port": int64(80), "protocol": "HTTP"}}, "listner": "typo"},
	}}
	if err := kc.Apply(ctx, []*unstructured.Unstructured{bad}); err == nil || !strings.Contains(err.Error(), "listner") {
		t.Errorf("a Gateway with an unknown field: %v, want a strict validation error", err)
	}
}

func refOf(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// noneLeft waits until no object with the selector remains in namespace
// (pods go when the kubelet confirms), and the namespace is gone or going.
func noneLeft(t *testing.T, c *cluster, ns, selector string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		opts := metav1.ListOptions{LabelSelector: selector}
		if l, err := c.Client.BatchV1().Jobs(ns).List(ctx, opts); err == nil {
			for _, x := range l.Items {
				left = append(left, "Job "+x.Name)
			}
		}
		if l, err := c.Client.CoreV1().Pods(ns).List(ctx, opts); err == nil {
			for _, x := range l.Items {
				left = append(left, "Pod "+x.Name)
			}
		}
		if l, err := c.Client.AppsV1().Deployments(ns).List(ctx, opts); err == nil {
			for _, x := range l.Items {
				left = append(left, "Deployment "+x.Name)
			}
		}
		if l, err := c.Client.CoreV1().Services(ns).List(ctx, opts); err == nil {
			for _, x := range l.Items {
				left = append(left, "Service "+x.Name)
			}
		}
		if l, err := c.Client.CoreV1().Secrets(ns).List(ctx, opts); err == nil {
			for _, x := range l.Items {
				left = append(left, "Secret "+x.Name)
			}
		}
		if n, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
			left = append(left, "Namespace "+ns)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("labelled objects left in %s: %v", ns, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func writeSweep(t *testing.T, target string, duration string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sweep.yaml")
	s := fmt.Sprintf("paths:\n  - {name: direct, url: %q}\nladder: c3t3,c6t3\npayloads: [100]\nendpoint: /bytes/{size}\nduration: %s\nwarmup: 200ms\n", target, duration)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testRun checks a whole run: render → apply → one Indexed Job per step → 3
// workers (real loadgen processes, loading a real httpbin) → collect through
// pods/log → exact merge → results directory → cleanup.
func testRun(t *testing.T, c *cluster, kl *kubelet, bin, kubeconfig, target string) {
	dir := filepath.Join(t.TempDir(), "results")
	junit := filepath.Join(t.TempDir(), "j.xml")
	before := served(t, target)
	r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, "k8s", "run", "--mesh", "none", "-n", "e2e-run", "-f", writeSweep(t, target, "2s"),
		"--workers", "3", "-o", dir, "--start-lead", "8s", "--no-metrics", "--image", "loadgen:e2e", "--run-id", "e2erun",
		"--assert", "errors<1%", "--junit", junit)
	if r.code != 0 {
		t.Fatalf("k8s run: %v", r)
	}
	t.Logf("k8s run:\n%s", r.stderr)
	// The CI checks hold for every merged step, as for a local sweep.
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), "<testcase") || !strings.Contains(r.stdout, "errors<1%") {
		t.Errorf("the checks: %v\n%s\nstdout:\n%s", err, b, r.stdout)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps in %s, want 2", len(steps), dir)
	}
	logs := kl.logsOf("e2e-run", k8s.ContainerWorker)
	var total int64
	for i, st := range steps {
		if st.Run == nil {
			t.Fatalf("step %s failed: %s", st.ID, st.Failed)
		}
		// Merge again what the workers printed, read straight from the
		// kubelet: the directory must hold exactly that merge.
		want, reps := remerge(t, logs, k8s.JobName("e2erun", i)+"-", 3)
		for _, rep := range reps {
			if !rep.ClockChecked || time.Duration(rep.ClockOffset).Abs() > time.Second {
				t.Errorf("worker %d: clock offset %v (checked %v): want one measured against the API server, near 0 here", rep.Index, rep.ClockOffset, rep.ClockChecked)
			}
		}
		got := st.Run
		if got.Summary.Latency != want.Summary.Latency || got.Summary.Requests != want.Summary.Requests || got.Histograms.Latency != want.Histograms.Latency {
			t.Errorf("step %d: stored %+v\nwant the merge of the workers' logs %+v", i, got.Summary.Latency, want.Summary.Latency)
		}
		if got.Config.Connections != st.Connections || got.Summary.Requests == 0 || got.Summary.Status[200] != got.Summary.Requests {
			t.Errorf("step %d: %d connections, %d requests, status %v", i, got.Config.Connections, got.Summary.Requests, got.Summary.Status)
		}
		var workers []merge.Worker
		b, err := os.ReadFile(filepath.Join(dir, run.WorkersDir, st.ID+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &workers); err != nil || len(workers) != 3 {
			t.Fatalf("workers file: %v, %d workers", err, len(workers))
		}
		idx := map[int]bool{}
		for _, w := range workers {
			idx[w.Index] = true
			if w.Generator.CPUSeconds <= 0 {
				t.Errorf("worker %d: no generator cost recorded", w.Index)
			}
		}
		if len(idx) != 3 {
			t.Errorf("worker indexes %v: want 0, 1, 2", idx)
		}
		total += got.Summary.Requests
	}
	if after := served(t, target); after-before < total {
		t.Errorf("httpbin served %d requests, the merged runs count %d", after-before, total)
	}
	noneLeft(t, c, "e2e-run", k8s.Selector(""))
	rep := runLoadgen(t, bin, kubeconfig, time.Minute, "report", dir)
	if rep.code != 0 || !strings.Contains(rep.stdout, "direct") {
		t.Errorf("loadgen report on the k8s results: %v", rep)
	}
}

// served is httpbin's count of requests served (/stats).
func served(t *testing.T, target string) int64 {
	t.Helper()
	resp, err := http.Get(target + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("/stats: %v: %s", err, b)
	}
	for _, k := range []string{"requests", "served", "count"} {
		if v, ok := s[k].(float64); ok {
			return int64(v)
		}
	}
	t.Fatalf("/stats has no request count: %s", b)
	return 0
}

// testIngressWorkers checks what a run does to the ingress-nginx
// controller's ConfigMap, which every Ingress of the cluster shares. Without
// --configure-controller a run only reads it (each step records the
// worker-processes that ran) and leaves it as it was; with the flag the run
// sets it, records what it held, and puts it back at the end, after Ctrl-C,
// and through `k8s cleanup` after a kill.
func testIngressWorkers(t *testing.T, c *cluster, bin, kubeconfig, target string) {
	ctx := context.Background()
	// The class and the ConfigMap ingress-nginx's chart creates; without
	// the class k8s run says the controller is missing (TestNodeMeshMissing).
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	if _, err := c.Client.NetworkingV1().IngressClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("IngressClass nginx: %v", err)
	}
	defer c.Client.NetworkingV1().IngressClasses().Delete(ctx, "nginx", metav1.DeleteOptions{})
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	chart := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx",
		Labels: map[string]string{"app.kubernetes.io/name": "ingress-nginx"}},
		Data: map[string]string{"worker-processes": "3", "allow-snippet-annotations": "false"}}
	if _, err := c.Client.CoreV1().ConfigMaps("ingress-nginx").Create(ctx, chart, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
		t.Fatal(err)
	}
	defer c.Client.CoreV1().ConfigMaps("ingress-nginx").Delete(ctx, chart.Name, metav1.DeleteOptions{})
	asBefore := func(when string) {
		t.Helper()
		cm, err := c.Client.CoreV1().ConfigMaps("ingress-nginx").Get(ctx, chart.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !reflect.DeepEqual(cm.Data, chart.Data) || !reflect.DeepEqual(cm.Labels, chart.Labels) || len(cm.Annotations) != 0 {
			t.Errorf("%s: the controller's ConfigMap is data %v labels %v annotations %v, want it as it was: %v %v",
				when, cm.Data, cm.Labels, cm.Annotations, chart.Data, chart.Labels)
		}
		// Field ownership as it was too: loadgen's forced apply took
		// worker-processes from Helm; the restore gives it back and
		// keeps nothing (a later `helm upgrade` meets no owner of ours).
		helmOwns := false
		for _, m := range cm.ManagedFields {
			if m.Manager == k8scluster.FieldManager {
				t.Errorf("%s: loadgen still owns %s of the controller's ConfigMap", when, m.FieldsV1.Raw)
			}
			if m.Manager == "helm" && m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"f:worker-processes"`) {
				helmOwns = true
			}
		}
		if !helmOwns {
			t.Errorf("%s: worker-processes is not Helm's again: %+v", when, cm.ManagedFields)
		}
	}
	steps := func(dir string, want int) {
		t.Helper()
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 2 {
			t.Fatalf("%d steps, %v", len(steps), err)
		}
		for _, st := range steps {
			if st.Workers != want || st.Run == nil {
				t.Errorf("step %s: worker-processes %d (failed %q), want %d", st.ID, st.Workers, st.Failed, want)
			}
		}
	}
	k8sRun := func(id, duration string, extra ...string) (args []string, dir string) {
		dir = filepath.Join(t.TempDir(), "results")
		return append([]string{"k8s", "run", "--mesh", "ingress-nginx", "-n", "e2e-ing-" + id, "-f", writeSweep(t, target, duration),
			"--workers", "3", "-o", dir, "--start-lead", "8s", "--no-metrics", "--run-id", id}, extra...), dir
	}

	// Without the flag: read, recorded per step, left alone.
	args, dir := k8sRun("ro", "1s")
	if r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, args...); r.code != 0 {
		t.Fatalf("k8s run --mesh ingress-nginx: %v", r)
	}
	steps(dir, 3)
	asBefore("after a run without --configure-controller")
	if r := runLoadgen(t, bin, kubeconfig, time.Minute, "k8s", "run", "--mesh", "ingress-nginx", "-n", "e2e-ing-x", "-f", writeSweep(t, target, "1s"),
		"-o", filepath.Join(t.TempDir(), "x"), "--worker-processes", "4", "--no-metrics"); r.code != 2 || !strings.Contains(r.stderr, "add --configure-controller") {
		t.Errorf("--worker-processes without --configure-controller: %v", r)
	}
	noneLeft(t, c, "e2e-ing-ro", k8s.Selector(""))

	// With it: set for the run, then put back, as recorded.
	args, dir = k8sRun("rw", "1s", "--configure-controller", "--worker-processes", "4")
	r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, args...)
	if r.code != 0 || !strings.Contains(r.stderr, "restored ConfigMap ingress-nginx/ingress-nginx-controller") ||
		!strings.Contains(r.stderr, "reloads nginx in every pod of its controller, for every Ingress it serves") {
		t.Fatalf("k8s run --configure-controller: %v", r)
	}
	steps(dir, 4)
	asBefore("after a run with --configure-controller")
	var ch k8scluster.ControllerChange
	if b, err := os.ReadFile(filepath.Join(dir, run.ControllerFile)); err != nil || json.Unmarshal(b, &ch) != nil {
		t.Fatalf("%s: %v", run.ControllerFile, err)
	}
	if !ch.Restored || ch.Previous["worker-processes"] == nil || *ch.Previous["worker-processes"] != "3" ||
		ch.Previous["keep-alive-requests"] != nil || ch.Set["worker-processes"] != "4" {
		t.Errorf("the results record %+v, want worker-processes 3 → 4, keep-alive-requests absent before, restored", ch)
	}

	// Ctrl-C and a kill, once the run has changed it.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		id := map[syscall.Signal]string{syscall.SIGINT: "int", syscall.SIGKILL: "kill"}[sig]
		args, _ := k8sRun(id, "30s", "--configure-controller", "--worker-processes", "5")
		cmd, out := startLoadgen(t, bin, kubeconfig, args...)
		deadline := time.Now().Add(60 * time.Second)
		for {
			cm, err := c.Client.CoreV1().ConfigMaps("ingress-nginx").Get(ctx, chart.Name, metav1.GetOptions{})
			if err == nil && cm.Data["worker-processes"] == "5" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the run never set worker-processes: %s", id, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, out, 90*time.Second)
		if sig == syscall.SIGKILL {
			r := runLoadgen(t, bin, kubeconfig, time.Minute, "k8s", "cleanup", "-n", "e2e-ing-kill")
			if r.code != 0 || !strings.Contains(r.stdout, "restored ConfigMap ingress-nginx/ingress-nginx-controller") {
				t.Errorf("k8s cleanup after a kill: %v", r)
			}
		}
		asBefore("after " + sig.String())
		noneLeft(t, c, "e2e-ing-"+id, k8s.Selector(""))
	}
}

// testLate checks that a worker whose pod starts after the start instant
// refuses to run; with --start-retries 0 its step fails with the pod's
// reason and log, the sweep goes on; by default the step runs again with
// twice the lead, which the next step keeps.
func testLate(t *testing.T, c *cluster, bin, kubeconfig, target string) {
	t.Run("retried", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "results")
		r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, "k8s", "run", "-n", "e2e-retry", "-f", writeSweep(t, target, "1s"),
			"--workers", "3", "-o", dir, "--start-lead", "8s", "--max-late", "1s", "--no-metrics", "--run-id", "retry")
		if r.code != 0 || !strings.Contains(r.stderr, "running it again with a 16s start lead") {
			t.Fatalf("k8s run with a late worker, retried: %v, want exit 0 after one retry", r)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{1, 0} {
			st := steps[i]
			switch {
			case st.Run == nil:
				t.Errorf("step %d failed: %s", i, st.Failed)
			case st.Cluster == nil:
				t.Errorf("step %d: no placement", i)
			case st.Cluster.StartRetries != want || st.Cluster.StartLead != 16:
				t.Errorf("step %d: start_retries %d, start_lead_s %v; want %d and 16 (doubled once, kept)", i, st.Cluster.StartRetries, st.Cluster.StartLead, want)
			}
		}
		noneLeft(t, c, "e2e-retry", k8s.Selector(""))
	})
	dir := filepath.Join(t.TempDir(), "results")
	r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, "k8s", "run", "-n", "e2e-late", "-f", writeSweep(t, target, "1s"),
		"--workers", "3", "-o", dir, "--start-lead", "8s", "--max-late", "1s", "--start-retries", "0", "--no-metrics", "--run-id", "late")
	if r.code != 1 {
		t.Fatalf("k8s run with a late worker: %v, want exit 1", r)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps, want both: the sweep goes on after a failed step", len(steps))
	}
	if f := steps[0].Failed; steps[0].Run != nil || !strings.Contains(f, "worker 1") || !strings.Contains(f, "late") {
		t.Errorf("step 0: failed %q, want worker 1 named as started late", f)
	}
	if steps[1].Run == nil {
		t.Errorf("step 1 failed too: %s", steps[1].Failed)
	}
	noneLeft(t, c, "e2e-late", k8s.Selector(""))
}

// testStuck checks that a worker that never starts fails its step with the
// pod's reason once the step's time is up; the sweep goes on, cleanup runs.
func testStuck(t *testing.T, c *cluster, bin, kubeconfig, target string) {
	dir := filepath.Join(t.TempDir(), "results")
	r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, "k8s", "run", "-n", "e2e-stuck", "-f", writeSweep(t, target, "1s"),
		"--workers", "2", "-o", dir, "--start-lead", "8s", "--no-metrics", "--run-id", "stuck")
	if r.code != 1 {
		t.Fatalf("k8s run with a worker that never starts: %v, want exit 1", r)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil || len(steps) != 2 {
		t.Fatalf("%d steps (%v), want both", len(steps), err)
	}
	if f := steps[0].Failed; !strings.Contains(f, "worker 1") || !strings.Contains(f, "had not started by the start instant") || !strings.Contains(f, "ImagePullBackOff") {
		t.Errorf("step 0: failed %q, want worker 1's pod reason", f)
	}
	if steps[1].Run == nil {
		t.Errorf("step 1: %s", steps[1].Failed)
	}
	noneLeft(t, c, "e2e-stuck", k8s.Selector(""))
}

// testWireMismatch checks that workers whose image is a loadgen of the next
// wire version (built with -tags loadgen_wire_next) refuse this coordinator's
// step; the run says so in one line naming both wire versions and stops
// there instead of failing every step alike; nothing is left.
func testWireMismatch(t *testing.T, c *cluster, kl *kubelet, bin, kubeconfig, target string) {
	const image = "loadgen:wire-next"
	next := buildLoadgen(t, "loadgen_wire_next")
	kl.mu.Lock()
	kl.images = map[string]string{image: next}
	kl.mu.Unlock()
	dir := filepath.Join(t.TempDir(), "results")
	r := runLoadgen(t, bin, kubeconfig, 3*time.Minute, "k8s", "run", "-n", "e2e-wire", "-f", writeSweep(t, target, "1s"), "--image", image,
		"--workers", "2", "-o", dir, "--start-lead", "8s", "--no-metrics", "--run-id", "wire")
	if r.code != 1 {
		t.Fatalf("k8s run with workers of another wire: %v, want exit 1", r)
	}
	last := strings.Split(strings.TrimSpace(r.stderr), "\n")
	msg := last[len(last)-1]
	t.Logf("k8s run said: %s", msg)
	for _, want := range []string{"loadgen: worker ", "wire version mismatch", fmt.Sprintf("wire %d", k8s.WireVersion), fmt.Sprintf("wire %d", k8s.WireVersion+1),
		"the steps after it were not run"} {
		if !strings.Contains(msg, want) {
			t.Errorf("last line %q lacks %q\n%v", msg, want, r)
		}
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil || len(steps) != 1 || !strings.Contains(steps[0].Failed, "wire version mismatch") {
		t.Errorf("%d steps (%v), want the first one only, failed on the wire: %+v", len(steps), err, steps)
	}
	noneLeft(t, c, "e2e-wire", k8s.Selector(""))
}

// testInterrupt checks that Ctrl-C during a step still deletes every labelled
// object.
func testInterrupt(t *testing.T, c *cluster, bin, kubeconfig, target string) {
	cmd := exec.Command(bin, "k8s", "run", "-n", "e2e-int", "-f", writeSweep(t, target, "30s"), "--workers", "3",
		"-o", filepath.Join(t.TempDir(), "results"), "--start-lead", "3s", "--no-metrics", "--run-id", "int")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := c.Client.CoreV1().Pods("e2e-int").List(context.Background(), metav1.ListOptions{LabelSelector: k8s.Selector("int")})
		if err == nil && len(pods.Items) == 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no workers appeared: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(4 * time.Second) // the workers are loading now
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("interrupted run exited 0")
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("interrupted run did not stop: %s", out)
	}
	if !strings.Contains(out.String(), "cleanup: deleted") {
		t.Errorf("no cleanup after Ctrl-C:\n%s", out)
	}
	noneLeft(t, c, "e2e-int", k8s.Selector(""))
}

// testCleanupAfterKill checks that a run killed outright (no time to clean
// up) leaves its objects; `loadgen k8s cleanup` deletes exactly those, and in
// a namespace loadgen did not create, nothing.
func testCleanupAfterKill(t *testing.T, c *cluster, bin, kubeconfig, target string) {
	ctx := context.Background()
	cmd := exec.Command(bin, "k8s", "run", "-n", "e2e-kill", "-f", writeSweep(t, target, "30s"), "--workers", "3",
		"-o", filepath.Join(t.TempDir(), "results"), "--start-lead", "3s", "--no-metrics", "--run-id", "kill")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := c.Client.CoreV1().Pods("e2e-kill").List(ctx, metav1.ListOptions{LabelSelector: k8s.Selector("kill")})
		if err == nil && len(pods.Items) == 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no workers appeared")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Kill() // SIGKILL: nothing is cleaned up
	_ = cmd.Wait()
	// Someone else's object in that namespace, and someone else's namespace.
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-loadgens", Namespace: "e2e-kill"}}
	if _, err := c.Client.CoreV1().ConfigMaps("e2e-kill").Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-theirs"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := runLoadgen(t, bin, kubeconfig, time.Minute, "k8s", "cleanup", "-n", "e2e-theirs"); r.code != 0 || !strings.Contains(r.stdout, "nothing of loadgen's") {
		t.Errorf("cleanup of a namespace loadgen did not create: %v", r)
	}
	if n, err := c.Client.CoreV1().Namespaces().Get(ctx, "e2e-theirs", metav1.GetOptions{}); err != nil || n.DeletionTimestamp != nil {
		t.Errorf("cleanup deleted a namespace loadgen did not create")
	}
	r := runLoadgen(t, bin, kubeconfig, time.Minute, "k8s", "cleanup", "-n", "e2e-kill")
	if r.code != 0 {
		t.Fatalf("cleanup: %v", r)
	}
	for _, want := range []string{"deleted Job e2e-kill/lg-kill-0", "deleted Deployment e2e-kill/loadgen-target", "deleted Service e2e-kill/loadgen-target", "deleted Namespace e2e-kill"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("cleanup output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "not-loadgens") {
		t.Errorf("cleanup deleted an object without loadgen's label:\n%s", r.stdout)
	}
	noneLeft(t, c, "e2e-kill", k8s.Selector(""))
	// No namespace controller runs here, so the unlabelled ConfigMap is
	// still readable: cleanup did not delete it itself.
	if _, err := c.Client.CoreV1().ConfigMaps("e2e-kill").Get(ctx, "not-loadgens", metav1.GetOptions{}); err != nil {
		t.Errorf("the unlabelled ConfigMap: %v", err)
	}
}

// testMissingCRDs checks that, where App Mesh's kinds are not installed, the
// run names them and applies nothing.
func testMissingCRDs(t *testing.T, c *cluster, bin, kubeconfig string) {
	r := runLoadgen(t, bin, kubeconfig, time.Minute, "k8s", "run", "--mesh", "appmesh", "-n", "e2e-appmesh",
		"-f", writeSweep(t, "http://127.0.0.1:1", "1s"), "-o", filepath.Join(t.TempDir(), "r"), "--no-metrics")
	if r.code != 1 || !strings.Contains(r.stderr, "Mesh (appmesh.k8s.aws/v1beta2)") || !strings.Contains(r.stderr, "nothing was applied") {
		t.Errorf("missing App Mesh CRDs: %v", r)
	}
	if n := strings.Count(r.stderr, "discontinued App Mesh"); n != 1 {
		t.Errorf("App Mesh's discontinuation said %d times, want once:\n%s", n, r.stderr)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(context.Background(), "e2e-appmesh", metav1.GetOptions{}); err == nil {
		t.Error("the namespace was created although the run stopped before applying")
	}
}

// testUnreachable checks that an unreachable cluster is one line naming the
// context and the address.
func testUnreachable(t *testing.T, c *cluster, bin string) {
	kc := writeKubeconfig(t, c, "https://127.0.0.1:1")
	r := runLoadgen(t, bin, kc, time.Minute, "k8s", "cleanup", "-n", "x")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "context e2e-context at https://127.0.0.1:1") {
		t.Errorf("unreachable API server: %v", r)
	}
}
