package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
	"loadgen/results/store"
)

// The fixtures are real results: testdata/sweep is `loadgen sweep` of the
// built-in demo (httpbin, and a real nginx in front of it; c1t1…c64t64 ×
// 100 B, 1 KiB), testdata/cni/* are tcp-rr, tcp-crr and tcp-stream sweeps
// of loadgen's TCP target over loopback.
const (
	sweepDir = "testdata/sweep"
	runStep  = "nginx_c4t4_100B_closed_r1"
)

func readSweep(t testing.TB, dir string) *Sweep {
	t.Helper()
	m, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Sweep{Name: dir, Manifest: m, Steps: steps}
}

func fixtureSweep(t testing.TB) []*Sweep { return []*Sweep{readSweep(t, sweepDir)} }

func fixtureRun(t testing.TB) []*Sweep {
	t.Helper()
	st, err := store.ReadStep(filepath.Join(sweepDir, store.StepsDir, runStep+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []*Sweep{SingleRun("nginx.json", st.Run)}
}

func fixtureCNI(t testing.TB) []*Sweep {
	var out []*Sweep
	for _, p := range []string{"tcp-rr", "tcp-crr", "tcp-stream"} {
		out = append(out, readSweep(t, "testdata/cni/"+p))
	}
	return out
}

func render(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	sweep, run, cni := fixtureSweep(t), fixtureRun(t), fixtureCNI(t)
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"sweep.md", func(b *bytes.Buffer) error { return Markdown(b, sweep, Options{}) }},
		{"sweep-wide.md", func(b *bytes.Buffer) error { return Markdown(b, sweep, Options{Wide: true}) }},
		{"run.md", func(b *bytes.Buffer) error { return Markdown(b, run, Options{}) }},
		{"cni.md", func(b *bytes.Buffer) error { return Markdown(b, cni, Options{}) }},
		{"sweep.csv", func(b *bytes.Buffer) error { return CSV(b, sweep) }},
		{"run.fortio.json", func(b *bytes.Buffer) error { return Fortio(b, run) }},
		{"cni.fortio.json", func(b *bytes.Buffer) error { return Fortio(b, cni[:1]) }},
		{"sweep.smp.json", func(b *bytes.Buffer) error { return SMP(b, sweep) }},
		{"run.hgrm", func(b *bytes.Buffer) error { return Percentiles(b, run) }},
	} {
		t.Run(tc.file, func(t *testing.T) { golden(t, tc.file, render(t, tc.write)) })
	}
}

var rungRE = regexp.MustCompile(`^c\d+t\d+$`)

// The Markdown table is SweepTable's, figure for figure.
func TestMarkdownAgreesWithSweepTable(t *testing.T) {
	s := fixtureSweep(t)[0]
	var table bytes.Buffer
	if err := SweepTable(&table, s.Baseline(), s.Steps, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, []*Sweep{s}, Options{Wide: true}) }))
	rows := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| c") {
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "| "), " | ") {
				if c = strings.TrimSpace(c); c != "" {
					cells = append(cells, c)
				}
			}
			rows[strings.Join(cells, " ")] = true
		}
	}
	n := 0
	for _, line := range strings.Split(table.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || !rungRE.MatchString(f[0]) {
			continue
		}
		n++
		if !rows[strings.Join(f, " ")] {
			t.Errorf("Markdown lacks the row %v", f)
		}
	}
	if n != 16 {
		t.Errorf("compared %d rows, want 16", n)
	}
}

func TestCSVColumns(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(render(t, func(b *bytes.Buffer) error { return CSV(b, fixtureSweep(t)) }))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 17 {
		t.Fatalf("%d rows, want a header and 16 steps", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, want := range []string{"path", "connections", "threads", "payload", "protocol", "rate_asked", "rate_achieved", "requests", "rps",
		"p50_us", "p75_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us", "max_us", "errors_connect", "errors_read", "errors_write",
		"errors_timeout", "errors_status", "errors_protocol", "cpu_mean.target", "cpu_max.target", "mem_mean.target", "mem_max.target",
		"cpu_mean.pid3806", "generator_cpu", "generator_saturated", "machine_saturated", "failed"} {
		if _, ok := col[want]; !ok {
			t.Errorf("no column %q in %v", want, rows[0])
		}
	}
	for _, r := range rows[1:] {
		if len(r) != len(rows[0]) {
			t.Fatalf("row of %d fields, header has %d", len(r), len(rows[0]))
		}
		proxied := r[col["path"]] == "nginx"
		if (r[col["cpu_mean.pid3806"]] != "") != proxied {
			t.Errorf("step %s: proxy cpu %q", r[col["step"]], r[col["cpu_mean.pid3806"]])
		}
		if r[col["step"]] == runStep && (r[col["requests"]] != "45244" || r[col["p99_us"]] != "982.527") {
			t.Errorf("%s: requests %s, p99 %s µs", runStep, r[col["requests"]], r[col["p99_us"]])
		}
	}
}

// fortio's histogram is the run's own: every request in a bucket, the
// buckets cover [min, max] in order, percentiles agree with the summary.
func TestFortioHistogramIsTheRuns(t *testing.T) {
	var res fortioResult
	if err := json.Unmarshal(render(t, func(b *bytes.Buffer) error { return Fortio(b, fixtureRun(t)) }), &res); err != nil {
		t.Fatal(err)
	}
	run := fixtureRun(t)[0].Steps[0].Run
	h := res.DurationHistogram
	if h.Count != run.Summary.Latency.Count || res.RetCodes["200"] != run.Summary.Requests || res.NumThreads != 4 {
		t.Errorf("count %d, 200s %d, threads %d", h.Count, res.RetCodes["200"], res.NumThreads)
	}
	var n int64
	prev := 0.0
	for i, b := range h.Data {
		n += b.Count
		if b.Start < prev-1e-12 || b.End < b.Start {
			t.Errorf("bucket %d [%g, %g] after %g", i, b.Start, b.End, prev)
		}
		prev = b.End
	}
	last := h.Data[len(h.Data)-1]
	if n != h.Count || last.Percent != 100 || h.Data[0].Start != h.Min || last.End != h.Max {
		t.Errorf("buckets hold %d of %d, end at %g%%, cover [%g, %g] of [%g, %g]", n, h.Count, last.Percent, h.Data[0].Start, last.End, h.Min, h.Max)
	}
	if len(h.Data) > 80 {
		t.Errorf("%d buckets: not coalesced", len(h.Data))
	}
	want := map[float64]results.Duration{50: run.Summary.Latency.P50, 90: run.Summary.Latency.P90, 99: run.Summary.Latency.P99, 99.9: run.Summary.Latency.P999}
	for _, p := range h.Percentiles {
		if w, ok := want[p.Percentile]; ok && math.Abs(p.Value-w.D().Seconds()) > 1e-9 {
			t.Errorf("p%g = %gs, summary says %v", p.Percentile, p.Value, w)
		}
	}
	if res.ActualDuration != int64(run.Summary.Duration) || res.RequestedQPS != "max" || res.RunType != "HTTP" {
		t.Errorf("ActualDuration %d, RequestedQPS %q, RunType %q", res.ActualDuration, res.RequestedQPS, res.RunType)
	}
}

func TestCoarseKeepsCounts(t *testing.T) {
	h := hist.New()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i*97) * time.Nanosecond)
	}
	fine := h.Buckets()
	coarse := Coarse(fine)
	var n int64
	for i, b := range coarse {
		n += b.Count
		if i > 0 && b.From <= coarse[i-1].To {
			t.Fatalf("bucket %d overlaps the previous", i)
		}
	}
	if n != h.Count() || len(coarse) >= len(fine)/5 || coarse[0].From != fine[0].From || coarse[len(coarse)-1].To != fine[len(fine)-1].To {
		t.Errorf("%d buckets of %d holding %d of %d", len(coarse), len(fine), n, h.Count())
	}
}

func TestSMPShape(t *testing.T) {
	var res []map[string]any
	if err := json.Unmarshal(render(t, func(b *bytes.Buffer) error { return SMP(b, fixtureSweep(t)) }), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 16 {
		t.Fatalf("%d results", len(res))
	}
	// Only PerformanceTestResult's fields, so strict protobuf JSON parsers accept it.
	fields := map[string]bool{"smp_version": true, "id": true, "labels": true, "start_time": true, "end_time": true, "latencies_ms": true,
		"actual_qps": true, "details_uri": true, "test_id": true, "mesh_config_id": true, "env_id": true}
	for _, r := range res {
		for k := range r {
			if !fields[k] {
				t.Errorf("field %q is not PerformanceTestResult's", k)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, r["start_time"].(string)); err != nil {
			t.Error(err)
		}
		for k, v := range r["labels"].(map[string]any) {
			if _, ok := v.(string); !ok {
				t.Errorf("label %s is %T, want a string", k, v)
			}
		}
	}
	lat := res[3]["latencies_ms"].(map[string]any) // nginx c4t4 100 B
	if p99 := lat["p99"].(float64); math.Abs(p99-0.982527) > 1e-9 {
		t.Errorf("p99 %g ms", p99)
	}
	if res[3]["labels"].(map[string]any)["loadgen.proxy.cpu_mcores"] != "520" {
		t.Errorf("labels %v", res[3]["labels"])
	}
}

func TestCNIMatrix(t *testing.T) {
	rows := CNIMatrix(fixtureCNI(t))
	if len(rows) != 1 || !rows[0].HasGbps || !rows[0].HasRR || !rows[0].HasCRR {
		t.Fatalf("rows %+v", rows)
	}
	rr := readSweep(t, "testdata/cni/tcp-rr")
	if want := float64(rr.Steps[0].Run.Summary.Latency.Mean); rows[0].RR != want || rows[0].RRRung != "c1t1" {
		t.Errorf("RR %v at %s, want the c1t1 mean %v", rows[0].RR, rows[0].RRRung, want)
	}
	if len(CNIMatrix(fixtureSweep(t))) != 0 {
		t.Error("an http sweep has no CNI matrix")
	}
}

func TestSizing(t *testing.T) {
	step := func(path string, workers int, rps float64, tls, newConn bool, established int64, cpu float64) *results.Step {
		return &results.Step{Path: path, Workers: workers, Rung: "c64t64", Connections: 64, Payload: 1024, Run: &results.Run{
			Config:  results.Config{Protocol: "http1", TLS: tls, NewConn: newConn},
			Summary: results.Summary{RPS: rps, Duration: results.Duration(10 * time.Second), Connections: results.Connections{Established: established + 64, Measured: established}},
		}, Watched: []results.ProcessCost{{Name: "nginx", Role: "proxy", CPUMean: cpu}, {Name: "target", Role: "target", CPUMean: 9}}}
	}
	s := &Sweep{Name: "sizing", Steps: []*results.Step{
		step("nginx-w4", 4, 40000, false, false, 64, 3.5), step("nginx-w1", 1, 12000, false, false, 64, 1),
		step("baseline", 0, 90000, false, false, 64, 0), // no workers: not a sizing path
		step("nginx-w4-tls", 4, 3000, true, true, 30000, 3.9), step("nginx-w1-tls", 1, 800, true, true, 8000, 1),
		step("nginx-w1-plain-new", 1, 5000, false, true, 50000, 1), // new connections without TLS: neither measure
	}}
	rows := Sizing([]*Sweep{s})
	want := []SizingRow{
		{Workers: 1, Paths: "nginx-w1, nginx-w1-tls, nginx-w1-plain-new", HasRPS: true, RPS: 12000, RPSCPU: 1, HasTPS: true, TPS: 800, TPSCPU: 1},
		{Workers: 4, Paths: "nginx-w4, nginx-w4-tls", HasRPS: true, RPS: 40000, RPSCPU: 3.5, HasTPS: true, TPS: 3000, TPSCPU: 3.9},
	}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("rows %+v\nwant %+v", rows, want)
	}
	if m, per := rows[1].Cost(30); m != 120 || per != 3 {
		t.Errorf("4 workers at 30 a CPU for 40000 req/s: cost %v a month, %v per 1k req/s; want 120 and 3", m, per)
	}
	md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, []*Sweep{s}, Options{CPUPrice: 30}) }))
	if !strings.Contains(md, "| 1 | 12000 | 12000 | 1.00 | 800 | 800 | 1.00 | 30.00 | 2.50 | nginx-w1, nginx-w1-tls, nginx-w1-plain-new |") {
		t.Errorf("the sizing table lacks the priced 1-worker row:\n%s", md)
	}
	var html bytes.Buffer
	if err := HTML(&html, []*Sweep{s}, Options{CPUPrice: 30}); err != nil || !strings.Contains(html.String(), "<td>120.00</td><td>3.00</td>") {
		t.Errorf("the HTML sizing table lacks the 4-worker cost (err %v)", err)
	}
	var text bytes.Buffer
	if err := SizingTable(&text, s.Steps, 0); err != nil || strings.Contains(text.String(), "cost") {
		t.Errorf("no price, yet cost columns:\n%s", text.String())
	}
	if len(Sizing(fixtureSweep(t))) != 0 {
		t.Error("the demo sweep has no sizing table")
	}
}
