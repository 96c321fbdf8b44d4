package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"loadgen/internal/promtest"
	"loadgen/internal/testport"
	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

// --prometheus, scraped by a real Prometheus every second: its query API
// returns what loadgen printed — the requests, every latency counted, the
// generator's CPU — for a run and for each step of a sweep.
func TestPrometheusLiveMetrics(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	addr := testport.Held(t)
	prom := promtest.Start(t, addr)
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := cli(t, "run", "-q", "-c", "2", "-d", "3s", "--prometheus", addr, "--prometheus-hold", "3s", "--json", out, url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]float64{
		"loadgen_requests_total":        float64(run.Summary.Requests),
		"loadgen_latency_seconds_count": float64(run.Summary.Latency.Count),
	} {
		if got, ok := queryEventually(t, prom, q, want); !ok || got != want {
			t.Errorf("%s = %v (found %v), loadgen printed %v", q, got, ok, want)
		}
	}
	if cpu, ok := promtest.Query(t, prom, last("loadgen_generator_cpu_seconds_total")); !ok || cpu <= 0 {
		t.Errorf("generator CPU %v", cpu)
	}
	if p99, ok := promtest.Query(t, prom, "histogram_quantile(0.99, "+last("loadgen_latency_seconds_bucket")+")"); !ok || p99 <= 0 || p99 > 0.5 {
		t.Errorf("p99 from the histogram: %v", p99)
	}

	// A sweep: a series per step.
	addr = testport.Held(t)
	prom = promtest.Start(t, addr)
	dir := filepath.Join(t.TempDir(), "s")
	code, _, stderr = cli(t, "sweep", "-q", "--path", "baseline="+startHTTPBin(t), "--ladder", "c1t1..c2t2", "--payloads", "100",
		"-d", "2s", "-o", dir, "--prometheus", addr, "--prometheus-hold", "5s")
	if code != 0 {
		t.Fatalf("sweep exit %d: %s", code, stderr)
	}
	for _, id := range []string{"baseline_c1t1_100B_closed_r1", "baseline_c2t2_100B_closed_r1"} {
		st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("loadgen_requests_total{step=%q}", id)
		if got, ok := queryEventually(t, prom, q, float64(st.Run.Summary.Requests)); !ok || got != float64(st.Run.Summary.Requests) {
			t.Errorf("%s = %v (found %v), the step counted %d", q, got, ok, st.Run.Summary.Requests)
		}
	}
}

// last is q's last sample in the past 5 minutes. The command has exited
// when the test asks: once Prometheus fails a scrape of it, its series are
// marked stale and a plain instant query finds nothing.
func last(q string) string { return "last_over_time(" + q + "[5m])" }

// queryEventually asks until Prometheus answers want or 10 s have passed:
// on a slow machine (the race pass) the last scrape may still be on its
// way into storage when the command returns.
func queryEventually(t *testing.T, prom, q string, want float64) (float64, bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := promtest.Query(t, prom, last(q))
		if (ok && got == want) || time.Now().After(deadline) {
			return got, ok
		}
		time.Sleep(200 * time.Millisecond)
	}
}
