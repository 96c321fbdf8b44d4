package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// sidedSweep is a sidecar mesh's sweep in one mode: a direct baseline and
// a mesh path, each step watching the workers' sidecars (client-proxy),
// the target's (server-proxy) and the target's own containers; a side
// without a sidecar in the mode is recorded as such.
func sidedSweep(mode string) *Sweep {
	step := func(path string, baseline bool, rps, client, server float64) *results.Step {
		side := func(name, side string, cores float64, none bool) results.ProcessCost {
			c := results.ProcessCost{Name: name, Role: "proxy", Side: side, Samples: 3, Processes: 1, CPUMean: cores,
				MemMean: 40 << 20, CPUPer1kRPS: cores / (rps / 1000), MiBPer1kRPS: 40 / (rps / 1000)}
			if none {
				return results.ProcessCost{Name: name, Role: "proxy", Side: side, NoProxy: "the workers run no istio-proxy in --mode " + mode}
			}
			return c
		}
		return &results.Step{Path: path, Baseline: baseline, Rung: "c8t2", Connections: 8, Threads: 2, Repeat: 1,
			Run: &results.Run{Config: results.Config{Protocol: "http1"}, Summary: results.Summary{Requests: int64(rps * 10), RPS: rps,
				Duration: results.Duration(10 * time.Second), Latency: results.Latency{P50: 1000, P99: 5000}, Status: map[int]int64{200: int64(rps * 10)}}},
			Watched: []results.ProcessCost{
				side("client-proxy", "client", client, mode == "serveronly"),
				side("server-proxy", "server", server, mode == "clientonly"),
				{Name: "target", Role: "target", Samples: 3, Processes: 1, CPUMean: 0.3, MemMean: 20 << 20},
			}}
	}
	return &Sweep{Name: "istio-" + mode, Manifest: &results.Manifest{Baseline: "direct", Paths: []string{"direct", "mesh"}}, Steps: []*results.Step{
		step("direct", true, 10000, 0.02, 0.01),
		step("mesh", false, 8000, 0.4, 0.6),
	}}
}

// TestProxySides checks that the table, the CSV and the HTML report the
// workers' and the target's sidecars as two figures, per 1000 requests/s too,
// and a side without a sidecar in the mode as "—" (CSV: none), never as not
// measurable; the proxies' total counts each once.
func TestProxySides(t *testing.T) {
	for _, mode := range []string{"both", "serveronly", "clientonly"} {
		t.Run(mode, func(t *testing.T) {
			s := sidedSweep(mode)
			text := sweepTable(t, s, TableOptions{Wide: true})
			lines := strings.Split(text, "\n")
			var head, mesh string
			for _, l := range lines {
				switch f := strings.Fields(l); {
				case len(f) > 0 && f[0] == "step":
					head = l
				case len(f) > 1 && f[1] == "mesh":
					mesh = l
				}
			}
			if head == "" || mesh == "" {
				t.Fatalf("no head or mesh row:\n%s", text)
			}
			at := func(col string) string {
				i := strings.Index(head, col)
				if i < 0 {
					t.Fatalf("no column %q:\n%s", col, text)
				}
				// The figure under the column's head ends where the head does.
				end := i + len(col)
				r := []rune(mesh)
				for end < len(r) && r[end] != ' ' {
					end++
				}
				start := end - 1
				for start > 0 && r[start-1] != ' ' {
					start--
				}
				return string(r[start:end])
			}
			want := map[string]string{"client cpu": "0.40", "client cpu/1k": "0.050", "client MiB": "40.0",
				"server cpu": "0.60", "server cpu/1k": "0.075", "server MiB": "40.0"}
			switch mode {
			case "serveronly":
				want["client cpu"], want["client cpu/1k"], want["client MiB"] = "—", "—", "—"
			case "clientonly":
				want["server cpu"], want["server cpu/1k"], want["server MiB"] = "—", "—", "—"
			}
			for col, w := range want {
				if got := at(col); got != w {
					t.Errorf("%s: %q, want %q\n%s", col, got, w, text)
				}
			}
			proxy := map[string]string{"both": "1.00", "serveronly": "0.60", "clientonly": "0.40"}[mode]
			if got := at("proxy cpu"); got != proxy {
				t.Errorf("proxy cpu %q, want %s (each sidecar once)\n%s", got, proxy, text)
			}
			if strings.Contains(text, "not measurable") {
				t.Errorf("a side without a proxy reads as not measurable:\n%s", text)
			}

			var b bytes.Buffer
			if err := CSV(&b, []*Sweep{s}); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			cell := func(col string) string {
				for i, h := range rows[0] {
					if h == col {
						return rows[2][i]
					}
				}
				t.Fatalf("no CSV column %s: %v", col, rows[0])
				return ""
			}
			wantCSV := map[string]string{"cpu_mean.client-proxy": "0.4", "cpu_per_1k.client-proxy": "0.05", "mib_per_1k.client-proxy": "5",
				"cpu_mean.server-proxy": "0.6", "cpu_per_1k.server-proxy": "0.075", "mem_mean.server-proxy": "41943040"}
			switch mode {
			case "serveronly":
				wantCSV["cpu_mean.client-proxy"], wantCSV["cpu_per_1k.client-proxy"], wantCSV["mib_per_1k.client-proxy"] = "none", "none", "none"
			case "clientonly":
				wantCSV["cpu_mean.server-proxy"], wantCSV["cpu_per_1k.server-proxy"], wantCSV["mem_mean.server-proxy"] = "none", "none", "none"
			}
			for col, w := range wantCSV {
				if got := cell(col); got != w {
					t.Errorf("CSV %s: %q, want %q", col, got, w)
				}
			}

			html := htmlOf(t, []*Sweep{s})
			for _, h := range []string{"client cpu", "server cpu"} {
				if !strings.Contains(html, h) {
					t.Errorf("the HTML report has no %q column", h)
				}
			}
			if mode != "both" && !strings.Contains(html, "<td>—</td>") {
				t.Errorf("the HTML report shows no side without a proxy (—)")
			}
		})
	}
}
