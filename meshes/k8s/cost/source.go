package cost

import (
	"context"
	"fmt"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// NewWatcher is the watcher of a run whose cost comes from metrics
// (k8s.Options.Metrics, as k8s.MetricsSource chose it): nil for
// k8s.MetricsNone; prom, its pods listed from c, for
// k8s.MetricsPrometheus; for k8s.MetricsAPI (or "") c's metrics.k8s.io,
// checked to serve namespace.
func NewWatcher(ctx context.Context, c *cluster.Cluster, metrics, namespace string, prom Prometheus) (Watcher, error) {
	switch metrics {
	case k8s.MetricsNone:
		return nil, nil
	case k8s.MetricsPrometheus:
		p := prom
		p.Pods = WatchedPods(c)
		return &p, nil
	case k8s.MetricsAPI, "":
	default:
		return nil, fmt.Errorf("metrics source %q: want %s, %s or %s", metrics, k8s.MetricsAPI, k8s.MetricsPrometheus, k8s.MetricsNone)
	}
	pm, err := NewPodMetrics(c)
	if err != nil {
		return nil, err
	}
	if err := pm.Check(ctx, namespace); err != nil {
		return nil, fmt.Errorf("%v; or --no-metrics", err)
	}
	return pm, nil
}
