package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"loadgen/loadgen"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/worker"
	"loadgen/results/hist"
	"loadgen/results/report"
	"loadgen/results/store"
)

func TestK8sRender(t *testing.T) {
	code, out, errOut := cli(t, "k8s", "render", "--mesh", "istio", "-n", "bench", "--mode", "serveronly")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	objs, err := k8s.DecodeStrict([]byte(out))
	if err != nil || len(objs) < 4 {
		t.Fatalf("render output does not decode strictly: %d objects, %v", len(objs), err)
	}
	if !strings.Contains(out, "namespace: bench") || !strings.Contains(out, "sidecar.istio.io/inject") {
		t.Errorf("render output lacks the namespace or the injection annotations:\n%s", out)
	}
	code, _, errOut = cli(t, "k8s", "render", "--mesh", "consul")
	if code != exitUsage || !strings.Contains(errOut, strings.Join(k8s.Meshes, ", ")) {
		t.Errorf("unknown mesh: exit %d, %s; want 2 and the list", code, errOut)
	}
	code, out, errOut = cli(t, "k8s", "render", "--mesh", "appmesh")
	if code != 0 || strings.Count(errOut+out, "discontinued App Mesh") != 1 {
		t.Errorf("appmesh: exit %d, the notice %d times, want once", code, strings.Count(errOut+out, "discontinued App Mesh"))
	}
	code, _, errOut = cli(t, "k8s", "render", "--mesh", "ingress-nginx", "--configure-controller")
	if code != 0 || strings.Count(errOut, "retired ingress-nginx") != 1 || !strings.Contains(errOut, "reloads nginx in every pod of its controller") {
		t.Errorf("ingress-nginx: exit %d, stderr %s", code, errOut)
	}
	if code, _, errOut = cli(t, "k8s", "render", "--mesh", "gateway"); code != exitUsage || !strings.Contains(errOut, "--class") {
		t.Errorf("gateway without --class: exit %d %s", code, errOut)
	}
	// A STRICT PeerAuthentication refuses the plaintext of workers that
	// have no sidecar.
	code, _, errOut = cli(t, "k8s", "render", "--mesh", "istio", "--mode", "serveronly", "--mtls")
	if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || !strings.Contains(first, "--mtls with --mode serveronly") || !strings.Contains(first, "use --mode both") {
		t.Errorf("--mtls --mode serveronly: exit %d %q, want 2 and one line", code, errOut)
	}
}

func TestK8sRunDryRunAndBadInput(t *testing.T) {
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(sw, []byte("paths:\n  - {name: mesh, url: \"http://target:8080\"}\nladder: c4t4\npayloads: [100]\nduration: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "k8s", "run", "--mesh", "linkerd", "-f", sw, "--workers", "2", "--dry-run", "--run-id", "dry")
	if code != 0 {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	for _, want := range []string{"Job lg-dry-0", "worker 1: -c 2 -t 2", "http://loadgen-target.loadgen.svc.cluster.local:8080/bytes/100", "kind: Job", "linkerd.io/inject"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut = cli(t, "k8s", "run", "-f", sw); code != exitUsage || !strings.Contains(errOut, "-o") {
		t.Errorf("no -o: exit %d %s", code, errOut)
	}
	// A sweep naming what only this machine has (here the local sweep's
	// cost window) is refused in one line naming the file, before the plan.
	local := filepath.Join(dir, "local.yaml")
	if err := os.WriteFile(local, []byte("paths:\n  - {name: mesh, url: \"http://target:8080\"}\nladder: c4t4\npayloads: [100]\nduration: 5s\ntrim_start: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "k8s", "run", "-f", local, "--dry-run")
	if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || !strings.HasPrefix(first, "loadgen: "+local+": trim_start and trim_end are the local sweep's") {
		t.Errorf("trim_start: exit %d %q, want 2 and the refusal", code, errOut)
	}
	// A step the class cannot carry is refused in one line, before the
	// cluster is touched: gRPC on VPC Lattice needs an HTTPS listener.
	grpc := filepath.Join(dir, "grpc.yaml")
	if err := os.WriteFile(grpc, []byte("paths:\n  - {name: g, url: \"http://target:9090\"}\nprotocol: grpc\nladder: c1t1\npayloads: [100]\nduration: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "k8s", "run", "--mesh", "gateway", "--class", "amazon-vpc-lattice", "-f", grpc, "-o", filepath.Join(dir, "out"))
	if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || !strings.Contains(first, "The GRPCRoute sectionName must refer to an HTTPS listener") {
		t.Errorf("gRPC through VPC Lattice: exit %d %q, want 2 and the refusal", code, errOut)
	}
	code, out, errOut = cli(t, "k8s", "run", "--mesh", "gateway", "--class", "nginx", "-f", grpc, "--dry-run", "--run-id", "dry")
	if code != 0 || !strings.Contains(out, "kind: GRPCRoute") || strings.Contains(out, "kind: HTTPRoute") {
		t.Errorf("gRPC through a gateway: exit %d %s, want a GRPCRoute and no HTTPRoute:\n%s", code, errOut, out)
	}
	// A dry run through Envoy Gateway cannot know the address: it says
	// which k8s run reads under --via service, not the Gateway's status.
	code, _, errOut = cli(t, "k8s", "run", "--mesh", "gateway", "--class", "eg", "-f", sw, "--dry-run", "--run-id", "dry")
	if first, _, _ := strings.Cut(errOut, "\n"); code == 0 || !strings.Contains(first, "labels gateway.networking.k8s.io/gateway-name=loadgen-gateway") ||
		strings.Contains(first, "status.addresses") || !strings.Contains(first, "--ingress-service") {
		t.Errorf("dry run through gateway eg: exit %d %q", code, errOut)
	}
	// --ingress-service names the controller's Service the workers load.
	code, out, errOut = cli(t, "k8s", "run", "--mesh", "ingress", "--class", "traefik", "--ingress-service", "traefik/traefik", "-f", sw, "--dry-run", "--run-id", "dry")
	if code != 0 || !strings.Contains(out, "--ingress-service traefik/traefik") {
		t.Errorf("--ingress-service: exit %d %s:\n%s", code, errOut, out)
	}
	for _, args := range [][]string{{"--mesh", "ingress", "--class", "traefik", "--ingress-service", "traefik"},
		{"--mesh", "ingress", "--class", "traefik", "--via", "published", "--ingress-service", "traefik/traefik"}, {"--mesh", "istio", "--ingress-service", "a/b"}} {
		code, _, errOut = cli(t, append(append([]string{"k8s", "run"}, args...), "-f", sw, "--dry-run")...)
		if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || !strings.Contains(first, "--ingress-service") {
			t.Errorf("%v: exit %d %q, want 2 and one line naming --ingress-service", args, code, errOut)
		}
	}
	// No kubeconfig: one line that says what was tried.
	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	code, _, errOut = cli(t, "k8s", "cleanup", "-n", "bench")
	if code != exitFail || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "kubeconfig context") {
		t.Errorf("no kubeconfig: exit %d %q", code, errOut)
	}
}

// TestMergeCLI: two real runs against one httpbin merge into one whose
// counts are the sums and whose histogram is the two merged.
func TestMergeCLI(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir()
	var files []string
	var total int64
	merged := hist.New()
	// Two generators of one load run at the same time: merge refuses runs
	// whose windows do not overlap.
	errs := make(chan string, 2)
	for i := range 2 {
		f := filepath.Join(dir, "w"+itoa(int64(i))+".json")
		files = append(files, f)
		go func() {
			if code, _, errOut := cli(t, "run", "-q", "-c", "2", "-t", "1", "-d", "1s", "--json", f, url+"/get"); code != 0 {
				errs <- "exit " + itoa(int64(code)) + ": " + errOut
				return
			}
			errs <- ""
		}()
	}
	for range 2 {
		if errOut := <-errs; errOut != "" {
			t.Fatalf("run: %s", errOut)
		}
	}
	for _, f := range files {
		r, err := store.ReadRun(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hist.Decode(r.Histograms.Latency)
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(h)
		total += r.Summary.Requests
	}
	all := filepath.Join(dir, "all.json")
	code, out, errOut := cli(t, append(append([]string{"merge"}, files...), "-o", all)...)
	if code != 0 {
		t.Fatalf("merge: exit %d %s", code, errOut)
	}
	r, err := store.ReadRun(all)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Requests != total || r.Summary.Latency.P99.D() != merged.Quantile(0.99) || r.Summary.Latency.Count != merged.Count() {
		t.Errorf("merged %d requests p99 %v count %d, want %d, %v, %d", r.Summary.Requests, r.Summary.Latency.P99, r.Summary.Latency.Count, total, merged.Quantile(0.99), merged.Count())
	}
	if !strings.Contains(out, "merged 2 runs") {
		t.Errorf("output: %s", out)
	}
	// Another load is refused, naming both files.
	other := filepath.Join(dir, "other.json")
	if code, _, errOut := cli(t, "run", "-q", "-c", "1", "-d", "200ms", "--json", other, url+"/bytes/10"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	code, _, errOut = cli(t, "merge", files[0], other, "-o", filepath.Join(dir, "x.json"))
	if code != exitFail || !strings.Contains(errOut, "different loads") || !strings.Contains(errOut, "other.json") {
		t.Errorf("different loads: exit %d %s", code, errOut)
	}
	if code, _, _ = cli(t, "merge", files[0]); code != exitUsage {
		t.Errorf("merge without -o: exit %d, want 2", code)
	}
}

// TestK8sRBAC: `k8s rbac` prints kubectl-applicable roles, what a run of
// the mesh needs (never nodes/proxy), and refuses bad input in one line.
func TestK8sRBAC(t *testing.T) {
	code, out, errOut := cli(t, "k8s", "rbac", "--mesh", "gateway", "--class", "eg", "-n", "bench", "--bind", "ci/loadgen")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	objs, err := k8s.DecodeStrict([]byte(out))
	if err != nil || len(objs) != 2 {
		t.Fatalf("%d objects, %v:\n%s", len(objs), err, out)
	}
	for _, want := range []string{"kind: ClusterRole", "name: loadgen-run-gateway", "gatewayclasses", "kind: ClusterRoleBinding", "namespace: ci"} {
		if !strings.Contains(out, want) {
			t.Errorf("rbac lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cli(t, "k8s", "rbac", "--for", "paths")
	if code != 0 || !strings.Contains(out, "- nodes") || !strings.Contains(out, "namespace: kube-system") || strings.Contains(out, "nodes/proxy") ||
		!strings.Contains(out, "- loadgen-paths") {
		t.Errorf("rbac --for paths: exit %d\n%s", code, out)
	}
	// The run's cost source: metrics.k8s.io only for a run that reads it.
	for _, tc := range []struct {
		args       []string
		pods, node bool
	}{
		{nil, true, true}, {[]string{"--no-node-cost"}, true, false},
		{[]string{"--prometheus", "http://prometheus.monitoring:9090"}, false, false}, {[]string{"--no-metrics"}, false, false},
	} {
		code, out, errOut := cli(t, append([]string{"k8s", "rbac", "--mesh", "istio"}, tc.args...)...)
		objs, err := k8s.DecodeStrict([]byte(out))
		if code != 0 || err != nil || len(objs) != 1 {
			t.Fatalf("%v: exit %d %v %s", tc.args, code, err, errOut)
		}
		cr, ok := objs[0].(*rbacv1.ClusterRole)
		if !ok {
			t.Fatalf("%v: a %T, want a ClusterRole", tc.args, objs[0])
		}
		var pods, node bool
		for _, r := range cr.Rules {
			if slices.Contains(r.APIGroups, "metrics.k8s.io") {
				pods = pods || slices.Contains(r.Resources, "pods")
				node = node || slices.Contains(r.Resources, "nodes")
			}
		}
		if pods != tc.pods || node != tc.node {
			t.Errorf("rbac %v: metrics.k8s.io pods %v, nodes %v; want %v, %v:\n%s", tc.args, pods, node, tc.pods, tc.node, out)
		}
	}
	for _, args := range [][]string{{"--bind", "loadgen"}, {"--for", "deploy"}, {"--mesh", "consul"}} {
		if code, _, errOut := cli(t, append([]string{"k8s", "rbac"}, args...)...); code != exitUsage || !strings.Contains(errOut, strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// TestK8sRenderSidecar: --mesh sidecar renders the proxy and capture;
// --proxy elsewhere, and a protocol the sidecars cannot carry, are usage
// errors.
func TestK8sRenderSidecar(t *testing.T) {
	code, out, errOut := cli(t, "k8s", "render", "--mesh", "sidecar", "--proxy", "nginx", "--mode", "serveronly")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := k8s.DecodeStrict([]byte(out)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: " + k8s.ContainerSidecar, "image: nginx:1.27", "nginx.conf: |", "- capture"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q", want)
		}
	}
	if code, _, errOut := cli(t, "k8s", "render", "--mesh", "istio", "--proxy", "nginx"); code != exitUsage || !strings.Contains(errOut, "--mesh sidecar") {
		t.Errorf("--proxy with istio: exit %d %s", code, errOut)
	}
	sw := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(sw, []byte("protocol: grpc\npaths:\n  - {name: mesh, url: \"http://target:9090\"}\nladder: c1t1\npayloads: [100]\nduration: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "k8s", "run", "--mesh", "sidecar", "-f", sw, "--dry-run"); code != exitUsage || !strings.Contains(errOut, "HTTP/1.1") {
		t.Errorf("grpc through --mesh sidecar: exit %d %s", code, errOut)
	}
}

// TestK8sPlacementFlags: the runner placement flags reach the rendered
// worker Job and target, repeated flags add up, and a bad value is one
// line and exit 2.
func TestK8sPlacementFlags(t *testing.T) {
	code, out, errOut := cli(t, "k8s", "render", "--worker-node-selector", "node-role=load", "--worker-node-selector", "zone=a",
		"--worker-toleration", "dedicated=load:NoSchedule", "--worker-toleration", "spot:Exists",
		"--worker-resources", "cpu=2", "--worker-resources", "memory=1Gi", "--worker-limits", "cpu=4,memory=1Gi", "--target-node", "node-b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	objs, err := k8s.DecodeStrict([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var job *batchv1.Job
	var target *appsv1.Deployment
	for _, o := range objs {
		switch v := o.(type) {
		case *batchv1.Job:
			job = v
		case *appsv1.Deployment:
			target = v
		}
	}
	if job == nil || target == nil {
		t.Fatalf("no Job or target in:\n%s", out)
	}
	pod := job.Spec.Template.Spec
	r := pod.Containers[0].Resources
	if got := fmt.Sprintf("%v %v %s %s %s %s", pod.NodeSelector, pod.Tolerations, r.Requests.Cpu(), r.Requests.Memory(), r.Limits.Cpu(), r.Limits.Memory()); got !=
		"map[node-role:load zone:a] [{dedicated Equal load NoSchedule <nil>} {spot Exists   <nil>}] 2 1Gi 4 1Gi" {
		t.Errorf("worker pod: %s", got)
	}
	na := target.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if got := fmt.Sprint(na[0].MatchFields); got != "[{metadata.name In [node-b]}]" {
		t.Errorf("target's node affinity %s", got)
	}
	for _, bad := range [][]string{
		{"--worker-node-selector", "node-role"},
		{"--worker-node-selector", "a=b", "--worker-node-selector", "a=c"},
		{"--worker-toleration", "dedicated=load:Sometimes"},
		{"--worker-toleration", "k=v:Exists"},
		{"--worker-resources", "cpu=lots"},
		{"--worker-resources", "gpu=1"},
		{"--worker-limits", "memory=-1"},
		{"--worker-cpu", "1", "--worker-resources", "cpu=1"},
		{"--worker-resources", "cpu=2", "--worker-limits", "cpu=1"},
		{"--target-node", "Node_1"},
	} {
		code, _, errOut := cli(t, append([]string{"k8s", "render"}, bad...)...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != exitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], "loadgen: ") || !strings.HasPrefix(lines[1], "Run 'loadgen k8s render --help'") {
			t.Errorf("%v: exit %d, stderr %q; want 2, one line and the usage hint", bad, code, errOut)
		}
	}
}

// TestK8sWorkerWire: a worker told another wire version refuses with one
// line naming both loadgen versions and both wires, and its report line
// says so to the coordinator; an image older than the check fails on
// --wire in the words the coordinator looks for ("unknown flag: --wire",
// shown here on another unknown flag, as pflag writes every one).
func TestK8sWorkerWire(t *testing.T) {
	next := strconv.Itoa(k8s.WireVersion + 1)
	code, out, errOut := cli(t, "k8s", "worker", "--wire", next, "--coordinator-version", "v9.9.9", "--workers", "1", "--", "run", "http://127.0.0.1:1/")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != exitFail || len(lines) != 1 || !strings.HasPrefix(lines[0], "loadgen: wire version mismatch: ") {
		t.Fatalf("exit %d, stderr %q: want 1 and one line", code, errOut)
	}
	for _, want := range []string{"loadgen v9.9.9, wire " + next, "loadgen " + loadgen.Version() + ", wire " + strconv.Itoa(k8s.WireVersion)} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("%q lacks %q", lines[0], want)
		}
	}
	r, err := worker.ParseReport([]byte(out))
	if err != nil || "loadgen: "+r.Error != lines[0] {
		t.Errorf("report %+v, %v: want the same error", r, err)
	}
	if code, _, errOut := cli(t, "k8s", "worker", "--workers", "1", "--", "run", "http://127.0.0.1:1/"); code != exitFail || !strings.Contains(errOut, "older than the wire check") {
		t.Errorf("no --wire: exit %d, %q", code, errOut)
	}
	if code, _, errOut := cli(t, "k8s", "worker", "--wire-from-the-future", "1"); code != exitUsage || !strings.HasPrefix(errOut, "loadgen: unknown flag: --wire-from-the-future\n") {
		t.Errorf("unknown flag: exit %d, %q", code, errOut)
	}
}

// TestK8sWorkerRunVerdicts: a worker whose run failed its own verdict
// (nothing succeeded) reports the run as measured, for the coordinator to
// judge the merged run, and exits 0; one whose run another status ended
// (--abort-on-fail: the run says why on stderr and returns a bare status)
// reports that why, not "exit status 108".
func TestK8sWorkerRunVerdicts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(5 * time.Millisecond)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	runWorker := func(args ...string) (int, *worker.Report, string) {
		t.Helper()
		code, out, errOut := cli(t, append([]string{"k8s", "worker", "--wire", strconv.Itoa(k8s.WireVersion), "--coordinator-version", loadgen.Version(),
			"--workers", "1", "--clock", "", "--", "run"}, args...)...)
		r, err := worker.ParseReport([]byte(out))
		if err != nil {
			t.Fatalf("exit %d, no report: %v; stderr %q", code, err, errOut)
		}
		return code, r, errOut
	}
	code, r, errOut := runWorker("-d", "200ms", srv.URL+"/")
	if code != exitOK || r.Error != "" || r.Run == nil || !strings.HasPrefix(r.Run.Summary.Verdict(), "no request succeeded") {
		t.Errorf("nothing succeeded: exit %d, report error %q, run %v: want 0, none, and the run (stderr %q)", code, r.Error, r.Run != nil, errOut)
	}
	code, r, errOut = runWorker("-d", "5s", "--assert", "p99<1ms", "--abort-on-fail", "--abort-after", "0s", srv.URL+"/slow")
	if code != exitFail || !strings.HasPrefix(r.Error, "exit status 108; last log lines: loadgen: ") {
		t.Errorf("aborted: exit %d, the report's error %q does not say why (its stderr: %q)", code, r.Error, errOut)
	}
}

// TestK8sRunHops: --hops, or the sweep file's hops, renders the chain of
// targets; the flag wins; the manifest carries the length to the report;
// a mesh that cannot chain is refused in one line.
func TestK8sRunHops(t *testing.T) {
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep.yaml")
	body := "paths:\n  - {name: mesh, url: \"http://target:8080\"}\n  - {name: direct, url: \"http://target:8081\", baseline: true}\nladder: c4t4\npayloads: [100]\nduration: 5s\n"
	if err := os.WriteFile(sw, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "k8s", "run", "--mesh", "istio", "-f", sw, "--hops", "3", "--dry-run", "--run-id", "dry")
	if code != 0 {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	for _, want := range []string{"name: loadgen-target-3", "http://loadgen-target-2.loadgen.svc.cluster.local:8080", "http://loadgen-target.loadgen.svc.cluster.local:8080/bytes/100"} {
		if !strings.Contains(out, want) {
			t.Errorf("--hops 3 dry run lacks %q", want)
		}
	}
	withHops := filepath.Join(dir, "hops.yaml")
	if err := os.WriteFile(withHops, []byte(body+"hops: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut = cli(t, "k8s", "run", "-f", withHops, "--dry-run", "--run-id", "dry"); code != 0 || !strings.Contains(out, "name: loadgen-target-2") || strings.Contains(out, "loadgen-target-3") {
		t.Errorf("hops: 2 in the sweep file: exit %d %s, want loadgen-target-2 only", code, errOut)
	}
	if code, _, errOut = cli(t, "k8s", "run", "--mesh", "appmesh", "-f", sw, "--hops", "2", "--dry-run"); code != exitUsage || strings.Count(errOut, "\n") > 2 || !strings.Contains(errOut, "--hops") {
		t.Errorf("--hops with appmesh: exit %d %q, want 2 and one line", code, errOut)
	}

	spec, err := sweep.Parse(strings.NewReader(body + "hops: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := k8s.Options{Hops: 4}
	if spec.Hops, err = o.ChainHops(spec.Hops, true); err != nil || o.Hops != 4 {
		t.Fatalf("the flag's 4 against the file's 2: %d, %v", o.Hops, err)
	}
	m, err := spec.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	s := &report.Sweep{Manifest: &m}
	if s.Hops() != 4 {
		t.Errorf("the manifest carries %d hops to the report (%s), want 4", s.Hops(), m.Spec)
	}
}

// TestK8sRunH3 checks `k8s run` with a sweep of protocol h3: through
// --mesh ingress the mesh path goes to the controller's Service on 443
// and the direct path to the target's UDP 8443, and the rendering has
// that port; through a sidecar mesh it is refused in one line, exit 2,
// before the cluster is touched.
func TestK8sRunH3(t *testing.T) {
	dir := t.TempDir()
	sw := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(sw, []byte("protocol: h3\npaths:\n  - {name: mesh, url: \"https://target:8080\", insecure: true}\n"+
		"  - {name: direct, url: \"https://target:8081\", insecure: true, baseline: true}\nladder: c2t1\npayloads: [100]\nendpoint: /bytes/{size}\nduration: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "k8s", "run", "--mesh", "ingress", "--class", "traefik", "--ingress-service", "traefik/traefik", "-f", sw, "--dry-run", "--run-id", "dry")
	if code != 0 {
		t.Fatalf("h3 through an ingress: exit %d %s", code, errOut)
	}
	for _, want := range []string{"https://traefik.traefik.svc.cluster.local:443/bytes/100", "https://loadgen-target.loadgen.svc.cluster.local:8443/bytes/100",
		"name: h3-direct\n    port: 8443\n    protocol: UDP"} {
		if !strings.Contains(out, want) {
			t.Errorf("h3 dry run lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = cli(t, "k8s", "run", "--mesh", "istio", "-f", sw, "-o", filepath.Join(dir, "out"))
	if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || !strings.Contains(first, "path mesh (https://target:8080): -p h3 through --mesh istio") ||
		!strings.Contains(first, "are not proxied") {
		t.Errorf("h3 through istio: exit %d %q, want 2 and the refusal in one line", code, errOut)
	}
}
