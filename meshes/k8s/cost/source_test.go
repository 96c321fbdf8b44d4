package cost

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// NewWatcher makes the one watcher each source names: none, the
// Prometheus given (its pods listed from the cluster), or metrics.k8s.io
// once the API server says it serves it; a source it does not know is
// refused, not read as metrics.k8s.io.
func TestNewWatcher(t *testing.T) {
	serves := func(metrics bool) *cluster.Cluster {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !metrics || r.URL.Path != "/apis/metrics.k8s.io/v1beta1/namespaces/bench/pods" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[]}`))
		}))
		t.Cleanup(srv.Close)
		return &cluster.Cluster{Config: &rest.Config{Host: srv.URL}}
	}
	prom := Prometheus{URL: "http://prometheus.monitoring:9090", CPU: "cpu{namespace=\"{namespace}\"}"}
	for _, tc := range []struct {
		metrics string
		metered bool // the cluster serves metrics.k8s.io
		want    string
		err     string
	}{
		{metrics: k8s.MetricsNone, want: "none"},
		{metrics: k8s.MetricsPrometheus, want: "prometheus"},
		{metrics: k8s.MetricsAPI, metered: true, want: "metrics.k8s.io"},
		{metrics: "", metered: true, want: "metrics.k8s.io"},
		{metrics: k8s.MetricsAPI, err: "metrics.k8s.io: "},
		{metrics: "cadvisor", metered: true, err: `metrics source "cadvisor"`},
	} {
		w, err := NewWatcher(context.Background(), serves(tc.metered), tc.metrics, "bench", prom)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.metrics, err, tc.err)
			} else if tc.metrics == k8s.MetricsAPI && !strings.HasSuffix(err.Error(), "; or --no-metrics") {
				t.Errorf("%q: %v, want --no-metrics offered", tc.metrics, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.metrics, err)
			continue
		}
		got := "none"
		switch w := w.(type) {
		case nil:
		case *Prometheus:
			got = "prometheus"
			if w.URL != prom.URL || w.CPU != prom.CPU || w.Pods == nil {
				t.Errorf("%q: %+v, want %+v with its pods listed", tc.metrics, w, prom)
			}
		case *PodMetrics:
			got = "metrics.k8s.io"
			if w.Pods == nil {
				t.Errorf("%q: PodMetrics without its pods listed", tc.metrics)
			}
		default:
			got = "?"
		}
		if got != tc.want {
			t.Errorf("NewWatcher(%q) is %s (%T), want %s", tc.metrics, got, w, tc.want)
		}
	}
}
