package k8s

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/clientset/versioned/fake"
)

// TestPodMetricsSumsTheContainer: the sampler sums the named container over
// the selected pods, counts a metrics-server timestamp once, and reduces
// the samples to mean and max. (The metrics API is client-go's fake here:
// the in-process API server of the e2e tests serves no metrics.k8s.io.)
func TestPodMetricsSumsTheContainer(t *testing.T) {
	pm := func(name string, at time.Time, proxyCPU, proxyMem string) *metricsv1beta1.PodMetrics {
		return &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Labels: map[string]string{LabelManagedBy: ManagedBy}},
			Timestamp:  metav1.NewTime(at), Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{
				{Name: "istio-proxy", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(proxyCPU), corev1.ResourceMemory: resource.MustParse(proxyMem)}},
				{Name: "app", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
			},
		}
	}
	now := time.Now()
	client := fake.NewSimpleClientset()
	// The fake lists PodMetrics as the API serves them, resource "pods".
	gvr := metricsv1beta1.SchemeGroupVersion.WithResource("pods")
	for _, m := range []*metricsv1beta1.PodMetrics{pm("a", now, "250m", "40Mi"), pm("b", now, "500m", "60Mi")} {
		if err := client.Tracker().Create(gvr, m, "bench"); err != nil {
			t.Fatal(err)
		}
	}
	p := &PodMetrics{Client: client, Every: 20 * time.Millisecond}
	w := Watch{Name: "istio-proxy", Role: "proxy", Namespace: "bench", Selector: Selector(""), Container: "istio-proxy"}
	stop, err := p.Start(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // several polls of one metrics-server sample
	c, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if c.Samples != 1 {
		t.Errorf("%d samples: one metrics-server timestamp must count once", c.Samples)
	}
	if c.CPUMean != 0.75 || c.MemMean != 100<<20 || c.Processes != 2 {
		t.Errorf("cost %+v: want 0.75 cores, 100 MiB over 2 pods (the app container left out)", c)
	}
}
