package cost

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"loadgen/internal/promtest"
)

func nodeMetric(name string, at time.Time, window time.Duration, cpu, mem string) *metricsv1beta1.NodeMetrics {
	return &metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.NewTime(at), Window: metav1.Duration{Duration: window},
		Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
}

// TestNodeMetricsWindows checks a node's figure from its NodeMetrics, as a
// pod's: only the windows within the load, weighted by their lengths;
// the other node's left out.
func TestNodeMetricsWindows(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	win := Window{From: t0, To: t0.Add(40 * time.Second), Measured: 35 * time.Second}
	client := fake.NewSimpleClientset()
	gvr := metricsv1beta1.SchemeGroupVersion.WithResource("nodes")
	for _, m := range []*metricsv1beta1.NodeMetrics{
		nodeMetric("n1", t0.Add(5*time.Second), 15*time.Second, "100m", "1Gi"), // began before the load
		nodeMetric("n2", t0.Add(20*time.Second), 10*time.Second, "3", "2Gi"),
	} {
		if err := client.Tracker().Create(gvr, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	p := &PodMetrics{Client: client, Every: 10 * time.Millisecond}
	gets := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "get" {
				n++
			}
		}
		return n
	}
	stop, err := p.Start(context.Background(), NodeWatch("n1"), win)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); gets() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d gets of the node's metrics in 10 s", gets())
		}
	}
	for _, m := range []*metricsv1beta1.NodeMetrics{
		nodeMetric("n1", t0.Add(20*time.Second), 15*time.Second, "1", "3Gi"),
		nodeMetric("n1", t0.Add(30*time.Second), 10*time.Second, "2500m", "5Gi"),
	} {
		n := gets()
		if err := client.Tracker().Update(gvr, m, ""); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); gets() < n+2; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the sampler stopped getting")
			}
		}
	}
	c, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	// (1 × 15 + 2.5 × 10) / 25 = 1.6 cores; memory the mean of 3 and 5 GiB.
	if c.Unmeasured != "" || c.Role != RoleNode || c.Name != "node/n1" || c.Samples != 2 || c.Processes != 1 {
		t.Fatalf("cost %+v: want 2 samples of node n1", c)
	}
	if d := c.CPUMean - 1.6; d > 1e-9 || d < -1e-9 {
		t.Errorf("cpu %v cores, want 1.6 (the window before the load and node n2 left out)", c.CPUMean)
	}
	if c.MemMean != 4<<30 {
		t.Errorf("memory %d, want 4 GiB", c.MemMean)
	}
	// A node metrics-server has not measured: said, by name.
	stop, err = p.Start(context.Background(), NodeWatch("n3"), win)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := stop(); err == nil || !strings.Contains(err.Error(), "node/n3") {
		t.Errorf("an unknown node: %+v %v", c, err)
	}
}

// TestPrometheusNode checks a node's figure from cAdvisor's root cgroup
// series of its kubelet, the other node's and the pods' left out.
func TestPrometheusNode(t *testing.T) {
	lines := func(el float64) []string {
		return []string{
			fmt.Sprintf(`container_cpu_usage_seconds_total{id="/",node="n1"} %f`, 100+1.25*el),
			fmt.Sprintf(`container_cpu_usage_seconds_total{id="/",node="n2"} %f`, 100+0.5*el),
			fmt.Sprintf(`container_cpu_usage_seconds_total{id="/kubepods.slice",node="n1"} %f`, 100+1.0*el),
			`container_memory_working_set_bytes{id="/",node="n1"} 2147483648`,
			`container_memory_working_set_bytes{id="/",node="n2"} 1073741824`,
		}
	}
	url := promtest.Start(t, serveExporter(t, &exporter{start: time.Now(), lines: lines}))
	for _, ok := promtest.Query(t, url, "up"); !ok; _, ok = promtest.Query(t, url, "up") {
		time.Sleep(100 * time.Millisecond) // until Prometheus's first scrape (after its discovery's)
	}
	p := &Prometheus{URL: url}
	win := Window{From: time.Now(), To: time.Now().Add(5 * time.Second), Measured: 5 * time.Second}
	stop, err := p.Start(context.Background(), NodeWatch("n1"), win)
	if err != nil {
		t.Fatal(err)
	}
	c, err := stop()
	if err != nil || c.Unmeasured != "" {
		t.Fatalf("%+v %v", c, err)
	}
	if c.CPUMean < 1.2 || c.CPUMean > 1.3 || c.MemMean != 2<<30 || c.Role != RoleNode {
		t.Errorf("node n1: %+v, want its root cgroup's 1.25 cores and 2 GiB", c)
	}
	p.NodeCPU, p.MaxWait = `nosuch_seconds_total{node="{node}"}`, time.Second
	stop, _ = p.Start(context.Background(), NodeWatch("n1"), win)
	if c, err := stop(); err != nil || !strings.Contains(c.Unmeasured, `nosuch_seconds_total{node="n1"}`) {
		t.Errorf("a series not scraped: %+v %v", c, err)
	}
}
