package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// istioToolsColumns is istio/tools' column list, copied from
// perf/benchmark/run_benchmark_job.sh, lines 190-192 (commit 0f2e902f,
// 2026-08-20), the --csv its job passes to runner/fortio.py:
//
//	--csv StartTime,ActualDuration,Labels,NumThreads,ActualQPS,p50,p90,p99,p999,cpu_mili_avg_istio_proxy_fortioclient,\
//	cpu_mili_avg_istio_proxy_fortioserver,cpu_mili_avg_istio_proxy_istio-ingressgateway,mem_Mi_avg_istio_proxy_fortioclient,\
//	mem_Mi_avg_istio_proxy_fortioserver,mem_Mi_avg_istio_proxy_istio-ingressgateway
//
// (fortio.py's own --csv default, lines 268-271, is the same list but for
// a comma missing after p999.)
const istioToolsColumns = "StartTime,ActualDuration,Labels,NumThreads,ActualQPS,p50,p90,p99,p999,cpu_mili_avg_istio_proxy_fortioclient," +
	"cpu_mili_avg_istio_proxy_fortioserver,cpu_mili_avg_istio_proxy_istio-ingressgateway,mem_Mi_avg_istio_proxy_fortioclient," +
	"mem_Mi_avg_istio_proxy_fortioserver,mem_Mi_avg_istio_proxy_istio-ingressgateway"

// istioConvertKeys are the other keys runner/fortio.py's convert_data
// makes (lines 42, 57-58, 63-64, 72-74 of the same commit).
var istioConvertKeys = []string{"RequestedQPS", "RunType", "min", "max", "p75", "errorPercent", "Payload"}

// istioLabel is runner.py's label (generate_test_labels, lines 243-260,
// and the mode appended in execute_sidecar_mode, lines 228-229): run id,
// _qps_, _c_, size, telemetry mode, sidecar mode.
var istioLabel = regexp.MustCompile(`^([0-9a-f]{8})_qps_(\d+)_c_(\d+)_(\d+)_(.+)_(no_istio|serveronly|clientonly|both|ingress|ambient|unknown)$`)

func readIstio(t *testing.T, sweeps ...*Sweep) (head []string, rows []map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	if err := IstioCSV(&buf, sweeps); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		rows = append(rows, m)
	}
	return recs[0], rows
}

// TestIstioCSVColumns checks that the header is istio/tools' list, in its
// order, then fortio.py's other keys.
func TestIstioCSVColumns(t *testing.T) {
	head, _ := readIstio(t, sidedSweep("both"))
	want := append(strings.Split(istioToolsColumns, ","), istioConvertKeys...)
	if !slices.Equal(head, want) {
		t.Errorf("header\n%q\nwant\n%q", head, want)
	}
}

// TestIstioCSVUnits checks that a step of known figures comes out in
// istio/tools' units: latency in whole µs, CPU in millicores, memory in MiB
// (fortio.py int(s*10**6); prom.py to_mili_cpus and to_mega_bytes, cpu*1000
// and bytes/1024/1024), ActualDuration in whole seconds, QPS rounded.
func TestIstioCSVUnits(t *testing.T) {
	start := time.Date(2026, 12, 6, 5, 0, 0, 123, time.UTC)
	ms := func(x float64) results.Duration { return results.Duration(x * float64(time.Millisecond)) }
	st := &results.Step{Path: "mesh", Rung: "c16t2", Connections: 16, Threads: 2, Payload: 1024, Rate: 1000, Repeat: 1,
		Run: &results.Run{Start: start, Config: results.Config{Protocol: "http1", Connections: 16, Threads: 2, Rate: 1000},
			Summary: results.Summary{Requests: 240000, RPS: 999.6, Duration: results.Duration(240500 * time.Millisecond),
				BytesRead: 240000 * 1200, Errors: results.Errors{Status: 2400},
				Latency: results.Latency{Min: ms(0.3004), P50: ms(2.2415), P75: ms(2.5), P90: ms(2.839), P99: ms(3.3637), P999: ms(7.1), Max: ms(12)}}},
		Watched: []results.ProcessCost{
			{Name: "client-proxy", Role: "proxy", Side: "client", Samples: 10, CPUMean: 0.27705, MemMean: 70 << 20},
			{Name: "server-proxy", Role: "proxy", Side: "server", Samples: 10, CPUMean: 0.236, MemMean: 103 << 20},
			{Name: "target", Role: "target", Samples: 10, CPUMean: 0.5, MemMean: 20 << 20},
		}}
	s := &Sweep{Name: "r", Manifest: &results.Manifest{Created: start, Paths: []string{"mesh"}}, Steps: []*results.Step{st}}
	_, rows := readIstio(t, s)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	want := map[string]string{
		"StartTime": "2026-12-06T05:00:00.000000123Z", "ActualDuration": "240", "NumThreads": "16", "ActualQPS": "1000",
		"p50": "2241", "p90": "2839", "p99": "3363", "p999": "7100", "min": "300", "max": "12000", "p75": "2500",
		"cpu_mili_avg_istio_proxy_fortioclient": "277.05", "cpu_mili_avg_istio_proxy_fortioserver": "236",
		"mem_Mi_avg_istio_proxy_fortioclient": "70", "mem_Mi_avg_istio_proxy_fortioserver": "103",
		"cpu_mili_avg_istio_proxy_istio-ingressgateway": "-", "mem_Mi_avg_istio_proxy_istio-ingressgateway": "-",
		"RequestedQPS": "1000", "RunType": "HTTP", "errorPercent": "1", "Payload": "1200",
	}
	for k, v := range want {
		if rows[0][k] != v {
			t.Errorf("%s = %q, want %q", k, rows[0][k], v)
		}
	}
	m := istioLabel.FindStringSubmatch(rows[0]["Labels"])
	if m == nil || m[2] != "1000" || m[3] != "16" || m[4] != "1024" || m[5] != "mesh" || m[6] != "both" {
		t.Errorf("Labels %q: want RUNID_qps_1000_c_16_1024_mesh_both", rows[0]["Labels"])
	}
}

// TestIstioCSVModes checks that each path's label ends with the mode
// istio/tools' graph_plotter.py selects by (Labels.str.endswith): the sides a
// k8s run watched, an ingress, a local sidecar path's placement, the
// baseline.
func TestIstioCSVModes(t *testing.T) {
	for _, mode := range []string{"both", "serveronly", "clientonly"} {
		_, rows := readIstio(t, sidedSweep(mode))
		if got := rows[1]["Labels"]; !strings.HasSuffix(got, "_mesh_"+mode) {
			t.Errorf("--mode %s: mesh labelled %q", mode, got)
		}
		if got := rows[0]["Labels"]; !strings.HasSuffix(got, "_direct_no_istio") {
			t.Errorf("--mode %s: the baseline labelled %q", mode, got)
		}
		for _, r := range rows {
			if !istioLabel.MatchString(r["Labels"]) {
				t.Errorf("label %q is not runner.py's form", r["Labels"])
			}
		}
	}
	run := func() *results.Run { return &results.Run{Config: results.Config{Protocol: "http1"}} }
	spec, _ := json.Marshal(map[string]any{"paths": []map[string]any{
		{"name": "base", "url": "http://127.0.0.1:1"},
		{"name": "envoy server", "sidecar": map[string]any{"proxy": "envoy", "placement": "serveronly"}},
		{"name": "nginx"},
		{"name": "nowatch"},
	}})
	s := &Sweep{Name: "local", Manifest: &results.Manifest{Spec: spec}, Steps: []*results.Step{
		{Path: "base", Baseline: true, Run: run()},
		{Path: "envoy server", Run: run(), Watched: []results.ProcessCost{{Name: "envoy", Role: "proxy", Samples: 3, CPUMean: 0.1}}},
		{Path: "nginx", Run: run(), Watched: []results.ProcessCost{{Name: "nginx", Role: "proxy", Samples: 3, CPUMean: 0.25, MemMean: 8 << 20}}},
		{Path: "nowatch", Run: run()},
		{Path: "failed"},
	}}
	_, rows := readIstio(t, s)
	want := []string{"_base_no_istio", "_envoy-server_serveronly", "_nginx_ingress", "_nowatch_unknown"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d (a failed step has none)", len(rows), len(want))
	}
	for i, w := range want {
		if !strings.HasSuffix(rows[i]["Labels"], w) {
			t.Errorf("row %d labelled %q, want the suffix %s", i, rows[i]["Labels"], w)
		}
	}
	if got := rows[2]["cpu_mili_avg_istio_proxy_istio-ingressgateway"]; got != "250" {
		t.Errorf("the reverse proxy's CPU %q, want 250 millicores in the ingress gateway's column", got)
	}
}
