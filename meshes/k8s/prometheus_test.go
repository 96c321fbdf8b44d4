package k8s

import (
	"context"
	"strings"
	"testing"
	"time"

	"loadgen/internal/promtest"
)

// startPrometheus runs a real Prometheus on loopback that scrapes itself
// every second: its own /metrics is the exporter.
func startPrometheus(t *testing.T) string { return promtest.Start(t) }

// TestPrometheusSampler reads a real Prometheus's CPU and memory of a
// real process (Prometheus itself, scraped every second) over a window.
func TestPrometheusSampler(t *testing.T) {
	url := startPrometheus(t)
	time.Sleep(3 * time.Second) // a few scrapes before the window
	p := &Prometheus{URL: url, Step: time.Second,
		CPU:    `sum(rate(process_cpu_seconds_total{job="{container}"}[10s]))`,
		Memory: `sum(process_resident_memory_bytes{job="{container}"})`}
	w := Watch{Name: "prometheus", Role: "proxy", Namespace: "monitoring", Container: "self"}
	ctx := context.Background()
	stop, err := p.Start(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	c, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if c.Samples < 4 {
		t.Errorf("%d samples over 6 s at a 1 s step", c.Samples)
	}
	if c.MemMean < 4<<20 || c.MemMax < c.MemMean {
		t.Errorf("memory mean %d max %d: want Prometheus's resident set (MiBs)", c.MemMean, c.MemMax)
	}
	if c.CPUMax <= 0 || c.CPUMean < 0 || c.CPUSeconds < 0 {
		t.Errorf("cpu mean %v max %v: want Prometheus's own CPU use", c.CPUMean, c.CPUMax)
	}
	if c.Name != "prometheus" || !strings.HasPrefix(c.Selector, "prometheus:") {
		t.Errorf("cost %+v", c)
	}
	// What Prometheus itself says the process's memory is, now, is of the
	// same order as the window's mean.
	vals, err := p.Range(ctx, `process_resident_memory_bytes{job="self"}`, time.Now().Add(-2*time.Second), time.Now())
	if err != nil || len(vals) == 0 {
		t.Fatalf("range: %v %v", vals, err)
	}
	if r := vals[len(vals)-1] / float64(c.MemMean); r < 0.5 || r > 2 {
		t.Errorf("memory now %v vs window mean %d", vals[len(vals)-1], c.MemMean)
	}
	// A query Prometheus refuses is an error that says why.
	if _, err := p.Range(ctx, `rate(`, time.Now().Add(-time.Second), time.Now()); err == nil || !strings.Contains(err.Error(), "rate(") {
		t.Errorf("bad query: %v", err)
	}
}

func TestPrometheusDefaultQueries(t *testing.T) {
	p := &Prometheus{}
	w := Watch{Namespace: "bench", Container: "istio-proxy"}
	if q := p.query(p.CPU, DefaultPromCPU, w); q != `sum(rate(container_cpu_usage_seconds_total{namespace="bench",container="istio-proxy"}[1m]))` {
		t.Errorf("cpu query %s", q)
	}
	if q := p.query(p.Memory, DefaultPromMemory, w); q != `sum(container_memory_working_set_bytes{namespace="bench",container="istio-proxy"})` {
		t.Errorf("memory query %s", q)
	}
}
