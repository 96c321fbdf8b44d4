package k8s

import "testing"

// MetricsSource is k8s run's and k8s rbac's one choice of where a run's
// cost comes from: --no-metrics wins over --prometheus, and with neither
// it is metrics.k8s.io; each choice is one Validate takes.
func TestMetricsSource(t *testing.T) {
	for _, tc := range []struct {
		prometheus string
		noMetrics  bool
		want       string
	}{
		{"", false, MetricsAPI},
		{"http://prometheus.monitoring:9090", false, MetricsPrometheus},
		{"", true, MetricsNone},
		{"http://prometheus.monitoring:9090", true, MetricsNone},
	} {
		got := MetricsSource(tc.prometheus, tc.noMetrics)
		if got != tc.want {
			t.Errorf("MetricsSource(%q, %v) = %q, want %q", tc.prometheus, tc.noMetrics, got, tc.want)
		}
		if _, err := (Options{Metrics: got}).WithDefaults(); err != nil {
			t.Errorf("MetricsSource(%q, %v) = %q: %v", tc.prometheus, tc.noMetrics, got, err)
		}
	}
}
