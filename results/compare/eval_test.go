package compare

import (
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

func ms(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }

// sampleRun is a run of 10 s: 9,990 responses (10 of them 503s) and 10
// failures without a response (5 timeouts, 5 read errors), on 2 CPUs.
func sampleRun() *results.Run {
	return &results.Run{
		Schema: results.SchemaVersion, Tool: "loadgen",
		Config: results.Config{Target: "http://127.0.0.1:8080/get", Protocol: "http1", Connections: 16, Threads: 2,
			Duration: results.Duration(10 * time.Second)},
		Summary: results.Summary{
			Requests: 9990, Duration: results.Duration(10 * time.Second), RPS: 999,
			Latency: results.Latency{Count: 9990, Min: ms(0.1), Mean: ms(2), Max: ms(80),
				P50: ms(1.5), P75: ms(2.5), P90: ms(5), P95: ms(12), P99: ms(23.4), P999: ms(40), P9999: ms(60)},
			Errors: results.Errors{Timeout: 5, Read: 5, Status: 10},
		},
		Generator: results.Cost{CPUs: 2, Utilization: 0.4},
	}
}

var sampleWatched = []results.ProcessCost{
	{Name: "nginx", Role: "proxy", Samples: 10, CPUMean: 0.75, CPUMax: 1, MemMean: 40 << 20, MemMax: 48 << 20},
	{Name: "target", Role: "target", Samples: 10, CPUMean: 0.5, MemMax: 20 << 20},
}

func TestEval(t *testing.T) {
	run := sampleRun()
	for _, tc := range []struct {
		expr     string
		pass     bool
		measured float64
		text     string
		err      string
	}{
		{"p99<20ms", false, 23.4, "23.4ms", ""},
		{"p99<30ms", true, 23.4, "23.4ms", ""},
		{"p99<0.03s", true, 0.0234, "23.4ms", ""},
		{"p99>=23.4ms", true, 23.4, "23.4ms", ""},
		{"p50<1500us", false, 1500, "1.5ms", ""},
		{"p50<=1.5ms", true, 1.5, "1.5ms", ""},
		{"p75<3ms", true, 2.5, "2.5ms", ""},
		{"p90<5.5ms", true, 5, "5ms", ""},
		{"p999<50ms", true, 40, "40ms", ""},
		{"p9999<50ms", false, 60, "60ms", ""},
		{"p95<20ms", true, 12, "12ms", ""},
		{"p99.99<50ms", false, 60, "60ms", ""},
		{"max<100ms", true, 80, "80ms", ""},
		{"mean<1ms", false, 2, "2ms", ""},
		{"rps>1000", false, 998, "998", ""}, // 999/s, 10 of them error statuses: 998/s answered without error
		{"rps>=900", true, 998, "998", ""},
		// 20 failed of 9,990 responses + 10 failures without one.
		{"errors<0.1%", false, 0.2, "0.2%", ""},
		{"errors<1%", true, 0.2, "0.2%", ""},
		{"errors<=20", true, 20, "20", ""},
		{"errors<20", false, 20, "20", ""},
		{"timeouts<0.1%", true, 0.05, "0.05%", ""},
		{"timeouts<5", false, 5, "5", ""},
		{"cpu<1", true, 0.8, "0.8 cores", ""},
		{"cpu<=30%", false, 40, "40%", ""},
		{"cpu.nginx<1", true, 0.75, "0.75 cores", ""},
		{"cpu.nginx<0.5", false, 0.75, "0.75 cores", ""},
		{"mem.nginx<40MiB", false, 48, "48MiB", ""},
		{"mem.nginx<=48MiB", true, 48, "48MiB", ""},
		{"mem.target<1GiB", true, 20.0 / 1024, "20MiB", ""},
		{"cpu.envoy<1", false, 0, "", `no process "envoy" was watched, only nginx, target`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			a, err := Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			r := a.Eval(run, sampleWatched)
			if r.Pass != tc.pass || r.Err != tc.err || r.MeasuredText != tc.text || !near(r.Measured, tc.measured) {
				t.Errorf("got %+v\nwant pass %v, measured %v (%q), err %q", r, tc.pass, tc.measured, tc.text, tc.err)
			}
			if r.Expr != a.String() || r.Metric != a.Metric {
				t.Errorf("result names %q/%q, want %q", r.Expr, r.Metric, a.String())
			}
		})
	}
}

func near(a, b float64) bool { return a == b || (a-b)/b < 1e-9 && (b-a)/b < 1e-9 }

func TestEvalCannotJudge(t *testing.T) {
	empty := sampleRun()
	empty.Summary = results.Summary{}
	empty.Generator = results.Cost{}
	for _, tc := range []struct {
		expr    string
		run     *results.Run
		watched []results.ProcessCost
		err     string
	}{
		{"p99<20ms", nil, nil, "no run"},
		{"p99<20ms", empty, nil, "no responses"},
		{"errors<1%", empty, nil, "no requests were sent"},
		{"cpu<1", empty, nil, "did not record"},
		{"cpu.nginx<1", sampleRun(), nil, `no process "nginx" was watched: cpu.NAME and mem.NAME need a sweep step`},
		{"mem.nginx<1MiB", sampleRun(), []results.ProcessCost{{Name: "nginx"}}, "no samples"},
		{"p99.5<20ms", sampleRun(), nil, "p99.5 is not in the summary and the run has no histogram to read it from"},
	} {
		t.Run(tc.expr+" "+tc.err, func(t *testing.T) {
			a, _ := Parse(tc.expr)
			r := a.Eval(tc.run, tc.watched)
			if r.Pass || !strings.Contains(r.Err, tc.err) {
				t.Errorf("got %+v, want a failure saying %q", r, tc.err)
			}
			if !strings.Contains(r.Message(), tc.err) {
				t.Errorf("message %q does not say %q", r.Message(), tc.err)
			}
		})
	}
	// Errors, not errors per cent, on an empty run: nothing failed.
	a, _ := Parse("errors<=0")
	if r := a.Eval(empty, nil); !r.Pass {
		t.Errorf("errors<=0 on an empty run: %+v", r)
	}
}

func TestResultMessage(t *testing.T) {
	a, _ := Parse("p99<20ms")
	if got, want := a.Eval(sampleRun(), nil).Message(), "p99 23.4ms is not < 20ms"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	// A figure that rounds to the bound is shown exactly.
	run := sampleRun()
	run.Summary.Latency.P99 = results.Duration(19999600 * time.Nanosecond)
	a, _ = Parse("p99>=20ms")
	if got, want := a.Eval(run, nil).Message(), "p99 19.9996ms is not >= 20ms"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	a, _ = Parse("p99 < 30 ms")
	if got, want := a.Eval(sampleRun(), nil).Message(), "p99 23.4ms < 30ms"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// Any percentile, from the run's histogram when the summary lacks it: a
// run of 1..1000 µs has its p99.5 at 995 µs; a p95 of 0 in a summary that
// counted requests (a file older than p95, without it) is read there too.
func TestEvalAnyPercentile(t *testing.T) {
	h := hist.New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	run := sampleRun()
	run.Summary.Latency = results.Reduce(h)
	run.Histograms.Latency = enc
	for _, tc := range []struct {
		expr string
		want time.Duration
	}{{"p99.5<1ms", h.Quantile(0.995)}, {"p95<1ms", h.Quantile(0.95)}, {"p75.5<1ms", h.Quantile(0.755)}, {"p1<1ms", h.Quantile(0.01)}} {
		a, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if r := a.Eval(run, nil); r.Err != "" || !near(r.Measured, float64(tc.want)/1e6) || !r.Pass {
			t.Errorf("%s: %+v, want %v", tc.expr, r, tc.want)
		}
	}
	if d := h.Quantile(0.995); d < 990*time.Microsecond || d > 1000*time.Microsecond {
		t.Errorf("p99.5 of 1..1000us: %v", d)
	}
	run.Summary.Latency.P95 = 0 // an older file's
	a, _ := Parse("p95<940us")
	if r := a.Eval(run, nil); r.Err != "" || r.Pass {
		t.Errorf("p95 from the histogram of an older file: %+v", r)
	}
	// Live (--abort-on-fail) only what the window's summary holds.
	for expr, live := range map[string]Live{"p95<1ms": OverWindow, "p99.5<1ms": AtEnd} {
		if a, _ := Parse(expr); a.Live() != live {
			t.Errorf("%s: live %v, want %v", expr, a.Live(), live)
		}
	}
}

// A run in which every request failed fails every latency assertion,
// naming what failed: a target answering 404 fast does not pass p99<10ms,
// as an unreachable one does not.
func TestEvalNothingSucceeded(t *testing.T) {
	notFound := sampleRun()
	s := &notFound.Summary
	s.Requests, s.Status = 101284, map[int]int64{404: 101284}
	s.Errors = results.Errors{Status: 101284}
	s.Latency = results.Latency{Count: 101284, P50: ms(0.05), P99: ms(0.08), Max: ms(1)}
	down := sampleRun()
	down.Summary.Requests, down.Summary.Status = 0, nil
	down.Summary.Errors = results.Errors{Connect: 12}
	down.Summary.Latency = results.Latency{}
	mixed := sampleRun()
	mixed.Summary.Requests, mixed.Summary.Status = 30, map[int]int64{503: 20, 500: 10, 200: 0}
	mixed.Summary.Errors = results.Errors{Status: 30, Timeout: 2}
	for _, tc := range []struct {
		run  *results.Run
		expr string
		err  string
	}{
		{notFound, "p99<10ms", "no successful request (404 × 101284)"},
		{notFound, "p50<=1s", "no successful request (404 × 101284)"},
		{notFound, "mean<1s", "no successful request (404 × 101284)"},
		{down, "p99<10ms", "no successful request (connect × 12)"},
		{mixed, "max<1s", "no successful request (500 × 10, 503 × 20, timeout × 2)"},
	} {
		a, _ := Parse(tc.expr)
		if r := a.Eval(tc.run, nil); r.Pass || r.Err != tc.err || r.Message() != a.Metric+": "+tc.err {
			t.Errorf("%s: %+v, want the error %q", tc.expr, r, tc.err)
		}
	}
	if v := notFound.Summary.Verdict(); v != "no request succeeded: 101284 of 101284 failed (404 × 101284)" {
		t.Errorf("verdict %q", v)
	}
}
