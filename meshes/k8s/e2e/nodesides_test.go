package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"loadgen/meshes/k8s"
	k8scluster "loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/run"
	"loadgen/results"
)

// TestNodeCostSidecar checks k8s run's cost selection on real pods: a
// target pod of two busy containers, its server (http-httpbin) and a
// sidecar named as Istio's (istio-proxy, a native sidecar: an init
// container that restarts always), each loaded by a pod the watches do
// not select. From both sources, with the watches an Istio run records
// (run.Watches): the target's figure is its server container's cgroup
// within 15% (not its pod's), the server proxy's is the sidecar
// container's, and the two together are the pod's: the sidecar counted
// once. The workers' side has no pod of this step, and its figure says so.
func TestNodeCostSidecar(t *testing.T) {
	n := testNode(t)
	ctx := context.Background()
	ns := "node-cost-sidecar"
	// No istiod runs on the node: the control plane's figure is
	// TestNodeSidecars' (--control-plane naming a stand-in), not this
	// test's, which holds each side's proxy and the target to their cgroups.
	o, err := k8s.Options{Mesh: k8s.MeshIstio, Namespace: ns, RunID: "sc", ControlPlane: []string{k8s.NoControlPlane}}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c := n.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })

	serve := func(name string, port int32) corev1.Container {
		return corev1.Container{Name: name, Image: n.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Args:           []string{"serve", "httpbin", "--addr", fmt.Sprintf("0.0.0.0:%d", port)},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port)}}}}
	}
	sidecar := serve("istio-proxy", 15001)
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	target := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loadgen-target-sc", Namespace: ns,
			Labels: map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: o.RunID, k8s.LabelName: k8s.TargetName}},
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{serve("http-httpbin", 8080)}},
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, target, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	target = waitPodReady(t, n, ns, target.Name)

	// The load: a pod of its own, one generator per container, unequal.
	load := func(name string, port, conns int) corev1.Container {
		return corev1.Container{Name: name, Image: n.Image, ImagePullPolicy: corev1.PullIfNotPresent,
			Args: []string{"run", "-q", "-d", "150s", "-c", fmt.Sprint(conns), "-t", "1", fmt.Sprintf("http://%s:%d/bytes/100", target.Status.PodIP, port)}}
	}
	loader := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "load", Namespace: ns, Labels: map[string]string{"app": "load"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{load("app", 8080, 4), load("sidecar", 15001, 2)}}}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, loader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, n, ns, loader.Name)

	podCg := podCgroup(t, string(target.UID))
	cgroups := map[string]string{"pod": podCg,
		"http-httpbin": containerCgroup(t, podCg, target.Status.ContainerStatuses, "http-httpbin"),
		"istio-proxy":  containerCgroup(t, podCg, target.Status.InitContainerStatuses, "istio-proxy")}

	cl, err := k8scluster.ConnectConfig(ctx, n.RESTConfig, "node")
	if err != nil {
		t.Fatal(err)
	}
	pm, err := cost.NewPodMetrics(cl)
	if err != nil {
		t.Fatal(err)
	}
	prom := &cost.Prometheus{URL: n.PrometheusURL, Pods: cost.WatchedPods(cl)}
	// 70 s: three cAdvisor measurements 10 to 20 s apart (cost.MinStep),
	// and metrics-server's 15 s windows.
	win := cost.Window{From: time.Now().Add(5 * time.Second), To: time.Now().Add(75 * time.Second), Measured: 70 * time.Second}
	watches, none := run.Watches(o, 0)
	if len(none) != 0 {
		t.Fatalf("an Istio run in --mode both records sides without proxies: %+v", none)
	}
	type started struct {
		source string
		w      cost.Watch
		stop   func() (results.ProcessCost, error)
	}
	var all []started
	samples := map[string][]cgSample{}
	for time.Now().Before(win.To.Add(time.Second)) {
		if all == nil && !time.Now().Before(win.From) {
			for _, w := range watches {
				for name, src := range map[string]cost.Watcher{"metrics.k8s.io": pm, "Prometheus": prom} {
					stop, err := src.Start(ctx, w, win)
					if err != nil {
						t.Fatalf("%s %s: %v", name, w.Name, err)
					}
					all = append(all, started{name, w, stop})
				}
			}
		}
		for name, cg := range cgroups {
			if s, ok := readCgroup(cg); ok {
				samples[name] = append(samples[name], s)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	figures := map[string]map[string]results.ProcessCost{} // source → watch → figure
	for _, s := range all {
		got, err := s.stop()
		if err != nil {
			t.Fatalf("%s %s: %v", s.source, s.w.Name, err)
		}
		if figures[s.source] == nil {
			figures[s.source] = map[string]results.ProcessCost{}
		}
		figures[s.source][s.w.Name] = got
		t.Run(s.source+"/"+s.w.Name, func(t *testing.T) {
			checkSidecarCost(t, s.w, got, samples, win)
		})
	}
	// The target's and the server proxy's figures together are the pod's
	// cgroup: each container once.
	for source, f := range figures {
		tg, px := f["target"], f[run.ServerProxy]
		if tg.Unmeasured != "" || px.Unmeasured != "" || tg.CoveredFrom == nil {
			continue // said above
		}
		pod, _, ok := truth(samples["pod"], *tg.CoveredFrom, *tg.CoveredTo)
		if !ok {
			t.Fatalf("%s: the pod cgroup's samples do not span the target's figure", source)
		}
		if sum := tg.CPUMean + px.CPUMean; !within(sum, pod) {
			t.Errorf("%s: target %.3f + server proxy %.3f = %.3f cores, the pod's cgroup %.3f: off by %.0f%%", source, tg.CPUMean, px.CPUMean, sum, pod, 100*(sum/pod-1))
		}
	}
}

// checkSidecarCost compares one watch's figure with the cgroups over the
// span it covers.
func checkSidecarCost(t *testing.T, w cost.Watch, got results.ProcessCost, samples map[string][]cgSample, win cost.Window) {
	from, to := win.From, win.To
	if got.CoveredFrom != nil && got.CoveredTo != nil && got.CoveredTo.After(*got.CoveredFrom) {
		from, to = *got.CoveredFrom, *got.CoveredTo
	}
	cores := func(name string) float64 {
		v, _, ok := truth(samples[name], from, to)
		if !ok {
			t.Fatalf("the %s cgroup's samples do not span %v–%v", name, from, to)
		}
		return v
	}
	app, proxy, pod := cores("http-httpbin"), cores("istio-proxy"), cores("pod")
	t.Logf("%s: %.3f cores over %v–%v (%s); cgroups: http-httpbin %.3f, istio-proxy %.3f, the pod %.3f",
		w.Name, got.CPUMean, from.Format("15:04:05"), to.Format("15:04:05"), got.Selector, app, proxy, pod)
	if app < 0.05 || proxy < 0.05 {
		t.Fatalf("the containers used %.3f and %.3f cores: the load did not reach both", app, proxy)
	}
	switch w.Name {
	case run.ClientProxy:
		if !strings.Contains(got.Unmeasured, "no pod matches") {
			t.Errorf("the workers' side has no pod of this step: %+v", got)
		}
		return
	case "target":
		if !within(got.CPUMean, app) {
			t.Errorf("target %.3f cores, its server container's cgroup %.3f: off by %.0f%%, more than 15%%", got.CPUMean, app, 100*(got.CPUMean/app-1))
		}
		if within(got.CPUMean, pod) {
			t.Errorf("target %.3f cores is within 15%% of its pod's %.3f, the sidecar's %.3f with it: the check cannot tell", got.CPUMean, pod, proxy)
		}
	case run.ServerProxy:
		if !within(got.CPUMean, proxy) {
			t.Errorf("server proxy %.3f cores, its container's cgroup %.3f: off by %.0f%%, more than 15%%", got.CPUMean, proxy, 100*(got.CPUMean/proxy-1))
		}
	default:
		t.Fatalf("an Istio run watches %s", w.Name)
	}
	if got.Unmeasured != "" || got.Processes != 1 {
		t.Errorf("%+v: want a figure of one pod", got)
	}
}

// containerCgroup is a container's cgroup under its pod's (containerd
// with cgroupfs names it by the container's id).
func containerCgroup(t *testing.T, podCg string, statuses []corev1.ContainerStatus, name string) string {
	t.Helper()
	for _, s := range statuses {
		if s.Name != name {
			continue
		}
		_, id, _ := strings.Cut(s.ContainerID, "://")
		cg := podCg + "/" + id
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/cpuacct", cg)); err != nil {
			t.Fatalf("container %s: %v", name, err)
		}
		return cg
	}
	t.Fatalf("no status of container %s: %+v", name, statuses)
	return ""
}

// waitPodReady waits for a pod to be ready and returns it.
func waitPodReady(t *testing.T, n *node.Node, ns, name string) *corev1.Pod {
	t.Helper()
	return waitPod(t, n, ns, name, func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

func waitPodRunning(t *testing.T, n *node.Node, ns, name string) *corev1.Pod {
	t.Helper()
	return waitPod(t, n, ns, name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}

func waitPod(t *testing.T, n *node.Node, ns, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := n.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s: %+v %v", ns, name, p.Status, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
