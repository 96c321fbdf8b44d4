package cost

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"loadgen/meshes/k8s"
)

func podMetric(name string, at time.Time, window time.Duration, proxyCPU, proxyMem string) *metricsv1beta1.PodMetrics {
	return &metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Labels: map[string]string{k8s.LabelManagedBy: k8s.ManagedBy}},
		Timestamp:  metav1.NewTime(at), Window: metav1.Duration{Duration: window},
		Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "istio-proxy", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(proxyCPU), corev1.ResourceMemory: resource.MustParse(proxyMem)}},
			{Name: "app", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
		},
	}
}

// TestPodMetricsWindows checks that the sampler sums the named container over
// the selected pods and counts only what metrics-server measured wholly
// within the load: a window that began before it (idle time) is left out,
// each timestamp counts once, and the windows within it are weighted by their
// lengths. (client-go's fake serves the metrics API here; the e2e tests
// read a real metrics-server.)
func TestPodMetricsWindows(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	win := Window{From: t0, To: t0.Add(40 * time.Second), Measured: 35 * time.Second}
	client := fake.NewSimpleClientset()
	gvr := metricsv1beta1.SchemeGroupVersion.WithResource("pods") // the fake lists PodMetrics as resource "pods"
	for _, m := range []*metricsv1beta1.PodMetrics{
		podMetric("a", t0.Add(5*time.Second), 15*time.Second, "50m", "20Mi"), // began before the load
		podMetric("b", t0.Add(20*time.Second), 10*time.Second, "500m", "60Mi"),
	} {
		if err := client.Tracker().Create(gvr, m, "bench"); err != nil {
			t.Fatal(err)
		}
	}
	p := &PodMetrics{Client: client, Every: 10 * time.Millisecond}
	w := Watch{Name: "istio-proxy", Role: "proxy", Namespace: "bench", Selector: k8s.Selector(""), Containers: []string{"istio-proxy"}}
	ctx := context.Background()
	stop, err := p.Start(ctx, w, win)
	if err != nil {
		t.Fatal(err)
	}
	// Several lists of the same samples, then of the next ones: waited
	// for as the fake counts them (a busy machine could keep the
	// sampler's first list past a fixed sleep, and miss b's first window).
	lists := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "list" {
				n++
			}
		}
		return n
	}
	waitLists := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); lists() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d lists of the metrics in 10 s, want %d", lists(), n)
			}
		}
	}
	waitLists(3)
	// metrics-server's next windows: a's first whole one, and b's again.
	for _, m := range []*metricsv1beta1.PodMetrics{
		podMetric("a", t0.Add(20*time.Second), 15*time.Second, "250m", "40Mi"),
		podMetric("b", t0.Add(35*time.Second), 15*time.Second, "1", "80Mi"),
	} {
		if err := client.Tracker().Update(gvr, m, "bench"); err != nil {
			t.Fatal(err)
		}
	}
	waitLists(lists() + 3)
	c, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	// a: 0.25 over its one whole window; b: (0.5×10 + 1×15)/25 = 0.8.
	if c.Unmeasured != "" || c.Samples != 3 || c.Processes != 2 {
		t.Fatalf("cost %+v: want 3 samples of 2 pods", c)
	}
	if d := c.CPUMean - 1.05; d > 1e-9 || d < -1e-9 {
		t.Errorf("cpu %v cores, want 0.25 + 0.8 (the window before the load and the app container left out)", c.CPUMean)
	}
	if c.MemMean != 40<<20+70<<20 || c.Covered != 15 {
		t.Errorf("cost %+v: want 110 MiB, 15 s covered", c)
	}
	// From the fixture, not from CPUMean: 0.25 and 0.8 cores over the 35 s
	// measured.
	if d := c.CPUSeconds - (0.25+0.8)*35; d > 1e-9 || d < -1e-9 {
		t.Errorf("cpu seconds %v, want (0.25 + 0.8) × 35 s", c.CPUSeconds)
	}

	// A step shorter than metrics-server's windows is not measurable.
	short := Window{From: t0.Add(21 * time.Second), To: t0.Add(30 * time.Second), Measured: 9 * time.Second}
	stop, err = p.Start(ctx, w, short)
	if err != nil {
		t.Fatal(err)
	}
	c, err = stop()
	if err != nil || !strings.Contains(c.Unmeasured, "not measurable at this step length") || !strings.Contains(c.Unmeasured, "15s windows") || c.CPUMean != 0 {
		t.Errorf("a 9 s step: %+v %v", c, err)
	}

	// A pod the API server lists and metrics-server has not measured yet
	// (a new pod, a short step) makes the figure unmeasurable, by name.
	p.Pods = func(context.Context, Watch) ([]Pod, error) { return []Pod{{Name: "a"}, {Name: "b"}, {Name: "c"}}, nil }
	stop, err = p.Start(ctx, w, win)
	if err != nil {
		t.Fatal(err)
	}
	c, err = stop()
	if err != nil || !strings.Contains(c.Unmeasured, "no sample of pod c yet") || c.CPUMean != 0 {
		t.Errorf("a pod without samples: %+v %v", c, err)
	}
}
