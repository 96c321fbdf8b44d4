package k8s

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"loadgen/results"
)

// PodMetrics samples metrics.k8s.io (metrics-server): each pod's
// container usage as the kubelet last measured it. metrics-server
// refreshes about every 15 s, so samples with the same timestamp count
// once.
type PodMetrics struct {
	Client metricsclient.Interface
	Every  time.Duration // default 5 s
}

// NewPodMetrics is a PodMetrics sampler for the cluster.
func (c *Cluster) NewPodMetrics() (*PodMetrics, error) {
	mc, err := metricsclient.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	return &PodMetrics{Client: mc}, nil
}

// Check tells whether the cluster serves metrics.k8s.io.
func (p *PodMetrics) Check(ctx context.Context, namespace string) error {
	_, err := p.Client.MetricsV1beta1().PodMetricses(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("metrics.k8s.io: %v (install metrics-server, or give --prometheus URL)", oneLine(err))
	}
	return nil
}

// Start implements Watcher.
func (p *PodMetrics) Start(ctx context.Context, w Watch) (func() (results.ProcessCost, error), error) {
	every := p.Every
	if every == 0 {
		every = 5 * time.Second
	}
	seen := map[string]time.Time{} // pod → the timestamp last counted
	sample := func(ctx context.Context) (usage, bool, error) {
		list, err := p.Client.MetricsV1beta1().PodMetricses(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector})
		if err != nil {
			return usage{}, false, fmt.Errorf("%s: metrics.k8s.io: %v", w.Name, oneLine(err))
		}
		u := usage{at: time.Now()}
		fresh := false
		for _, pm := range list.Items {
			if t := pm.Timestamp.Time; !t.Equal(seen[pm.Name]) {
				seen[pm.Name] = t
				fresh = true
			}
			counted := false
			for _, c := range pm.Containers {
				if w.Container != "" && c.Name != w.Container {
					continue
				}
				u.cores += c.Usage.Cpu().AsApproximateFloat64()
				u.bytes += c.Usage.Memory().Value()
				counted = true
			}
			if counted {
				u.pods++
			}
		}
		return u, fresh && u.pods > 0, nil
	}
	stopc := make(chan struct{})
	type res struct {
		s   []usage
		err error
	}
	done := make(chan res, 1)
	start := time.Now()
	go func() {
		s, err := sampleLoop(ctx, every, sample, stopc)
		done <- res{s, err}
	}()
	return func() (results.ProcessCost, error) {
		close(stopc)
		r := <-done
		return reduce(w, r.s, time.Since(start)), r.err
	}, nil
}
