package run

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"loadgen/internal/promtest"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/results"
)

// costPod is a pod of a run as the API server and the metrics sources see
// it: its containers (native sidecars among its init containers) and the
// cores each uses.
type costPod struct {
	ns     string // "": the run's namespace
	name   string
	labels map[string]string
	cores  map[string]float64 // by container
	inits  []string           // native sidecars: restartPolicy Always
	other  []string           // init containers that end before the app (istio-init)
}

// in is the pod's namespace: its own, else the run's.
func (c costPod) in(ns string) string {
	if c.ns != "" {
		return c.ns
	}
	return ns
}

func (c costPod) pod(ns string) *corev1.Pod {
	ns = c.in(ns)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: ns, Labels: c.labels}, Spec: corev1.PodSpec{NodeName: "n1"}}
	always := corev1.ContainerRestartPolicyAlways
	for _, n := range c.containers() {
		switch {
		case contains(c.inits, n):
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: n, RestartPolicy: &always})
		default:
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
		}
	}
	for _, n := range c.other {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: n})
	}
	return p
}

func (c costPod) containers() []string {
	var out []string
	for n := range c.cores {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// istioPods are an Istio run's pods: the target with its four servers and
// istio-proxy, and a worker of step 0 with istio-proxy as a native
// sidecar. Every container uses a different number of cores, so that a
// figure that counts one twice, or leaves one out, is off.
func istioPods(o k8s.Options) []costPod {
	run := func(extra map[string]string) map[string]string {
		l := map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: o.RunID}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	return []costPod{
		{name: "loadgen-target-abc", labels: run(map[string]string{k8s.LabelName: k8s.TargetName}),
			cores: map[string]float64{"http-httpbin": 0.3, "http-direct": 0.02, "grpc-echo": 0.04, "tcp-echo": 0.01, "istio-proxy": 0.5},
			other: []string{"istio-init"}},
		{name: "lg-r1-0-xyz", labels: run(map[string]string{k8s.LabelName: k8s.ClientName, "loadgen.dev/step": "0"}),
			cores: map[string]float64{"loadgen": 1.5, "istio-proxy": 0.2}, inits: []string{"istio-proxy"}},
		// The control plane, in its own namespace: counted whole, once.
		{ns: "istio-system", name: "istiod-5d9f", labels: map[string]string{"app": "istiod"}, cores: map[string]float64{"discovery": 0.07}},
	}
}

// TestTargetCostIsItsOwnContainers (metrics.k8s.io): the target's figure
// is its servers' containers, not its pod's, which holds the server's
// sidecar too; the sidecar is counted once, by the proxy's watch.
func TestTargetCostIsItsOwnContainers(t *testing.T) {
	o, _ := k8s.Options{Mesh: k8s.MeshIstio, Namespace: "bench", RunID: "r1"}.WithDefaults()
	pods := istioPods(o)
	got := podMetricsCosts(t, o, 0, pods)
	want := 0.3 + 0.02 + 0.04 + 0.01
	if c := got["target"]; c.Unmeasured != "" || math.Abs(c.CPUMean-want) > 1e-6 || c.Processes != 1 {
		t.Errorf("target %+v: want %.2f cores, its four servers' (not its istio-proxy's 0.5)", c, want)
	}
	checkCountedOnce(t, got, pods)
}

// podMetricsCosts runs every watch of an Istio run's step 0 against
// metrics.k8s.io (client-go's fake, the pods' usage at one instant within
// the window) and the API server's pods (its fake).
func podMetricsCosts(t *testing.T, o k8s.Options, step int, pods []costPod) map[string]results.ProcessCost {
	t.Helper()
	ctx := context.Background()
	kube := fake.NewClientset()
	mc := metricsfake.NewSimpleClientset()
	t0 := time.Now().Truncate(time.Second)
	gvr := metricsv1beta1.SchemeGroupVersion.WithResource("pods")
	for _, cp := range pods {
		if _, err := kube.CoreV1().Pods(cp.in(o.Namespace)).Create(ctx, cp.pod(o.Namespace), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pm := &metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: cp.name, Namespace: cp.in(o.Namespace), Labels: cp.labels},
			Timestamp: metav1.NewTime(t0.Add(20 * time.Second)), Window: metav1.Duration{Duration: 15 * time.Second}}
		for _, n := range cp.containers() {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: n, Usage: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cp.cores[n]*1000), resource.DecimalSI),
				corev1.ResourceMemory: resource.MustParse("10Mi")}})
		}
		if err := mc.Tracker().Create(gvr, pm, cp.in(o.Namespace)); err != nil {
			t.Fatal(err)
		}
	}
	src := &cost.PodMetrics{Client: mc, Every: time.Hour, Pods: cost.WatchedPods(&cluster.Cluster{Client: kube})}
	win := cost.Window{From: t0, To: t0.Add(40 * time.Second), Measured: 35 * time.Second}
	out := map[string]results.ProcessCost{}
	ws, none := Watches(o, step)
	for _, w := range ws {
		stop, err := src.Start(ctx, w, win)
		if err != nil {
			t.Fatal(err)
		}
		c, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		out[c.Name] = c
	}
	for _, c := range none {
		out[c.Name] = c
	}
	return out
}

// checkCountedOnce wants the watches' figures together to be every
// watched container once: the target's servers and the mesh's proxies,
// and no worker's own container.
func checkCountedOnce(t *testing.T, got map[string]results.ProcessCost, pods []costPod) {
	t.Helper()
	var sum, want float64
	var names []string
	for name, c := range got {
		if c.Unmeasured != "" {
			t.Errorf("%s: %s", name, c.Unmeasured)
		}
		if c.NoProxy != "" && (c.CPUMean != 0 || c.Samples != 0) {
			t.Errorf("%s has no proxy and a figure: %+v", name, c)
		}
		sum += c.CPUMean
		names = append(names, fmt.Sprintf("%s %.3f", name, c.CPUMean))
	}
	for _, p := range pods {
		for n, cores := range p.cores {
			if n != k8s.ContainerWorker {
				want += cores
			}
		}
	}
	if math.Abs(sum-want) > 0.01*want {
		t.Errorf("the watches add up to %.3f cores (%s), want %.3f: each server and proxy container once", sum, strings.Join(names, ", "), want)
	}
}

// exporter serves cAdvisor's series of pods for a real Prometheus to
// scrape: each container's CPU counter growing at its cores, and the pod
// cgroup's (container="", no image) at their sum.
type exporter struct {
	mu    sync.Mutex
	start time.Time
	ns    string
	pods  []costPod
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	el := time.Since(e.start).Seconds()
	for _, p := range e.pods {
		var sum float64
		for _, n := range p.containers() {
			sum += p.cores[n]
			fmt.Fprintf(w, "container_cpu_usage_seconds_total{namespace=%q,pod=%q,container=%q,image=\"img\"} %f\n", p.in(e.ns), p.name, n, 1+p.cores[n]*el)
			fmt.Fprintf(w, "container_memory_working_set_bytes{namespace=%q,pod=%q,container=%q,image=\"img\"} %d\n", p.in(e.ns), p.name, n, 10<<20)
		}
		fmt.Fprintf(w, "container_cpu_usage_seconds_total{namespace=%q,pod=%q,container=\"\",image=\"\"} %f\n", p.in(e.ns), p.name, 5+sum*el)
		fmt.Fprintf(w, "container_memory_working_set_bytes{namespace=%q,pod=%q,container=\"\",image=\"\"} %d\n", p.in(e.ns), p.name, 10<<20*len(p.cores))
	}
}

// TestTargetCostIsItsOwnContainersPrometheus checks what
// TestTargetCostIsItsOwnContainers does, from cAdvisor's series in a real
// Prometheus, where the pod cgroup's series holds every container of the pod.
func TestTargetCostIsItsOwnContainersPrometheus(t *testing.T) {
	o, _ := k8s.Options{Mesh: k8s.MeshIstio, Namespace: "bench", RunID: "r1"}.WithDefaults()
	pods := istioPods(o)
	got := prometheusCosts(t, o, pods)
	want := 0.3 + 0.02 + 0.04 + 0.01
	if c := got["target"]; c.Unmeasured != "" || math.Abs(c.CPUMean-want) > 0.1*want || c.Processes != 1 {
		t.Errorf("target %+v: want %.2f cores, its four servers' (not its pod cgroup's, with istio-proxy's 0.5)", c, want)
	}
	checkCountedOnce(t, got, pods)
}

// prometheusCosts runs every watch of an Istio run's step 0 against a real
// Prometheus scraping the pods' cAdvisor series.
func prometheusCosts(t *testing.T, o k8s.Options, pods []costPod) map[string]results.ProcessCost {
	t.Helper()
	ctx := context.Background()
	kube := fake.NewClientset()
	for _, cp := range pods {
		if _, err := kube.CoreV1().Pods(cp.in(o.Namespace)).Create(ctx, cp.pod(o.Namespace), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: &exporter{start: time.Now(), ns: o.Namespace, pods: pods}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	url := promtest.Start(t, ln.Addr().String())
	// Prometheus scrapes its targets once its discovery has run: the
	// window begins at its first scrape.
	for !scrapedPast(t, url, time.Time{}) {
		time.Sleep(100 * time.Millisecond)
	}
	src := &cost.Prometheus{URL: url, Pods: cost.WatchedPods(&cluster.Cluster{Client: kube})}
	win := cost.Window{From: time.Now(), To: time.Now().Add(6 * time.Second), Measured: 6 * time.Second}
	var stops []func() (results.ProcessCost, error)
	ws, _ := Watches(o, 0)
	for _, w := range ws {
		stop, err := src.Start(ctx, w, win)
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, stop)
	}
	// Prometheus has the window's samples once it has scraped past it.
	for !scrapedPast(t, url, win.To) {
		time.Sleep(100 * time.Millisecond)
	}
	out := map[string]results.ProcessCost{}
	for _, stop := range stops {
		c, err := stop()
		if err != nil {
			t.Fatal(err)
		}
		out[c.Name] = c
	}
	return out
}

// scrapedPast tells whether Prometheus's last scrape was after t.
func scrapedPast(t *testing.T, url string, at time.Time) bool {
	v, ok := promtest.Query(t, url, "timestamp(up)")
	return ok && (at.IsZero() || v > float64(at.UnixNano())/1e9)
}

// TestProxySidesInEveryMode checks that the workers' and the target's
// sidecars are two figures in every mode. A side without a sidecar in the
// mode is recorded as such, not as unmeasured (which made the whole proxy
// figure vanish, explained as too short a step); the pods of the step before,
// still terminating, and pods without the sidecar are not in a figure.
func TestProxySidesInEveryMode(t *testing.T) {
	for _, mode := range k8s.Modes {
		t.Run(mode, func(t *testing.T) {
			o, _ := k8s.Options{Mesh: k8s.MeshIstio, Mode: mode, Namespace: "bench", RunID: "r1"}.WithDefaults()
			pods := istioPods(o)
			target, worker, istiod := pods[0], pods[1], pods[2]
			worker.labels[k8s.LabelStep] = "1" // the step measured
			// The previous step's worker, its envoy still in its preStop
			// sleep, with a sidecar in every mode.
			prev := costPod{name: "lg-r1-0-old", labels: map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: o.RunID,
				k8s.LabelName: k8s.ClientName, k8s.LabelStep: "0"}, cores: map[string]float64{"loadgen": 0.01, "istio-proxy": 0.7}, inits: []string{"istio-proxy"}}
			switch mode {
			case k8s.ModeServerOnly:
				delete(worker.cores, "istio-proxy")
			case k8s.ModeClientOnly:
				delete(target.cores, "istio-proxy")
			case k8s.ModeNone:
				delete(worker.cores, "istio-proxy")
				delete(target.cores, "istio-proxy")
			}
			got := podMetricsCosts(t, o, 1, []costPod{target, worker, prev, istiod})
			want := map[string]float64{ClientProxy: 0.2, ServerProxy: 0.5}
			for _, side := range []struct{ name, side string }{{ClientProxy, "client"}, {ServerProxy, "server"}} {
				c, ok := got[side.name]
				switch {
				case !ok:
					t.Errorf("no %s record: %v", side.name, got)
				case c.Side != side.side || c.Role != "proxy":
					t.Errorf("%s: side %q role %q", side.name, c.Side, c.Role)
				case mode == k8s.ModeNone || (side.side == "client" && mode == k8s.ModeServerOnly) || (side.side == "server" && mode == k8s.ModeClientOnly):
					if c.NoProxy == "" || c.Unmeasured != "" || !strings.Contains(c.NoProxy, mode) {
						t.Errorf("%s in --mode %s: %+v, want no proxy, said so", side.name, mode, c)
					}
				case c.NoProxy != "" || c.Unmeasured != "" || math.Abs(c.CPUMean-want[side.name]) > 1e-6 || c.Processes != 1:
					t.Errorf("%s in --mode %s: %+v, want %.1f cores of one pod", side.name, mode, c, want[side.name])
				}
			}
			checkCountedOnce(t, got, []costPod{target, worker, istiod})
			if c := got["istiod"]; c.Role != RoleControlPlane || math.Abs(c.CPUMean-0.07) > 1e-6 {
				t.Errorf("istiod in --mode %s: %+v, want the control plane's 0.07 cores", mode, c)
			}
		})
	}
}
