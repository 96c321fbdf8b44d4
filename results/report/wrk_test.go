package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"loadgen/results"
	"loadgen/results/hist"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The unit formatting is wrk's, checked against lines wrk printed.
func TestWrkUnits(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtTimeUS(635.91), "635.91us"},
		{fmtTimeUS(889.39), "0.89ms"}, // ≥ 85% of the next unit moves up
		{fmtTimeUS(12920), "12.92ms"},
		{fmtTimeUS(3.05e6), "3.05s"},
		{fmtTimeUS(300e6), "5.00m"},
		{fmtMetric(56200), "56.20k"},
		{fmtMetric(713.67), "713.67"},
		{fmtMetric(910), "0.91k"},
		{fmtBinary(17.76 * (1 << 30)), "17.76G"},
		{fmtBinary(564.62 * 1024), "564.62K"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func fixture() *results.Run {
	ms := func(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }
	lat := results.Latency{Count: 22464, Min: ms(0.05), Mean: ms(0.63591), StdDev: ms(0.89), Max: ms(12.92), WithinStdDev: 93.69,
		P50: ms(0.25), P75: ms(0.491), P90: ms(0.7), P95: ms(1.9), P99: ms(5.8), P999: ms(9.1), P9999: ms(12.1)}
	unc := lat
	unc.P95, unc.P99 = ms(0.9), ms(1.2)
	return &results.Run{
		Schema: 1, Tool: "loadgen",
		Config: results.Config{Target: "http://127.0.0.1:8080/index.html", Protocol: "http1", Connections: 50, Threads: 2,
			Duration: results.Duration(10 * time.Second), Rate: 2500},
		Summary: results.Summary{
			Requests: 22464, Duration: results.Duration(10 * time.Second), RPS: 2246.4, BytesRead: 19070000, ReadPerSec: 1907000,
			Latency: lat, Uncorrected: &unc, ThreadRPS: results.Spread{Samples: 200, Mean: 1123.2, StdDev: 80.7, Max: 1300, WithinStdDev: 86.54},
			Status: map[int]int64{200: 22454, 503: 10}, Errors: results.Errors{Connect: 1, Timeout: 3, Status: 10}, Non2xx3xx: 10,
			Connections: results.Connections{Established: 51, Failed: 1},
			Connect:     &results.Latency{P50: ms(0.1), P99: ms(0.3), Max: ms(0.4)},
			Pacing:      &results.Pacing{Asked: 2500, Achieved: 2499.9, Sent: 24999, Late: 12, MaxLag: ms(4.5)},
		},
		Generator: results.Cost{CPUSeconds: 1.25, UserSeconds: 0.5, SysSeconds: 0.75, PeakRSS: 30 << 20, CPUs: 2, Utilization: 0.0625},
	}
}

func TestWrkGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Wrk(&buf, fixture(), WrkOptions{Latency: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "wrk.txt", buf.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// The failed requests' classes add up to the failed count: connects that
// failed are named when they were requests' own (a connection per
// request), not when they were reconnects between requests.
func TestUnansweredClasses(t *testing.T) {
	e := results.Errors{Connect: 290057, Read: 6, Status: 4}
	if got := unanswered(e, 290063); got.Connect != 290057 || got.Read != 6 || got.Status != 0 {
		t.Errorf("a connection per request: %+v", got)
	}
	if got := unanswered(results.Errors{Connect: 90, Read: 10}, 10); got.Connect != 0 || got.Read != 10 {
		t.Errorf("reconnects between requests: %+v", got)
	}
}

// Connects that failed before the window (in the warm-up) are told apart
// from the window's, which are its connect errors.
func TestConnectionsBeforeTheWindow(t *testing.T) {
	run := &results.Run{Config: results.Config{Target: "http://127.0.0.1:1/", Connections: 1, Threads: 1}}
	run.Summary.Connections = results.Connections{Failed: 100, FailedMeasured: 30}
	run.Summary.Errors.Connect = 30
	var b bytes.Buffer
	if err := WrkBody(&b, run, WrkOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("100 failed (70 before the window, not connect errors)")) {
		t.Errorf("connections line:\n%s", b.String())
	}
}

// A run on a saturated machine says so as a sweep explains its M flag, in
// the same words (FlagMeaning), with how busy the machine was; a run on a
// machine with CPU to spare says nothing of it.
func TestWrkMachineSaturated(t *testing.T) {
	run := fixture()
	run.Machine = &results.MachineCost{CPUs: 2, BusyCores: 1.96, Utilization: 0.98, Saturated: true}
	var b bytes.Buffer
	if err := WrkBody(&b, run, WrkOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "\n  WARNING: machine saturated: the machine's CPUs were ≥90% busy (every process, from /proc/stat);\n    figures measure contention (1.96 of 2 CPUs busy, 98%)\n"
	if !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Errorf("no line %q in\n%s", want, b.String())
	}
	run.Machine = &results.MachineCost{CPUs: 2, BusyCores: 1, Utilization: 0.5}
	b.Reset()
	WrkBody(&b, run, WrkOptions{})
	if bytes.Contains(b.Bytes(), []byte("machine saturated")) {
		t.Errorf("a machine half busy is said saturated:\n%s", b.String())
	}
	// The sweep's tables and its HTML report explain M in the same words.
	if !bytes.Contains([]byte(flagLegend()), []byte("M machine saturated")) {
		t.Errorf("legend %q", flagLegend())
	}
}

// --percentiles chooses the percentiles of loadgen's latency lines: those
// the summary holds from it, any other from the run's histogram; the
// default list has p95. A line past 100 columns goes on under its first
// figure.
func TestWrkPercentiles(t *testing.T) {
	h := hist.New()
	for i := 1; i <= 10000; i++ {
		h.Record(time.Duration(i) * 100 * time.Nanosecond) // 0.1 .. 1000 µs
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Config: results.Config{Target: "http://127.0.0.1:1/", Connections: 1, Threads: 1}}
	run.Summary.Latency, run.Histograms.Latency = results.Reduce(h), enc
	line := func(opt WrkOptions) string {
		var b bytes.Buffer
		if err := WrkBody(&b, run, opt); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "  Latency:") {
				// with its continuation, under the first figure
				for _, next := range lines[i+1:] {
					if !strings.HasPrefix(next, strings.Repeat(" ", 25)) {
						break
					}
					l += next
				}
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("no latency line:\n%s", b.String())
		return ""
	}
	q := func(p float64) string { return Latency(results.Duration(h.Quantile(p))) }
	if got, want := line(WrkOptions{}), "Latency: p50 "+q(0.5)+" p90 "+q(0.9)+" p95 "+q(0.95)+" p99 "+q(0.99)+" p99.9 "+q(0.999)+" p99.99 "+q(0.9999)+" max "+q(1); got != want {
		t.Errorf("default:\n got %s\nwant %s", got, want)
	}
	if got, want := line(WrkOptions{Percentiles: []float64{75, 99.5, 99.999}}), "Latency: p75 "+q(0.75)+" p99.5 "+q(0.995)+" p99.999 "+q(0.99999)+" max "+q(1); got != want {
		t.Errorf("--percentiles 75,99.5,99.999:\n got %s\nwant %s", got, want)
	}
	var b bytes.Buffer
	if err := WrkBody(&b, run, WrkOptions{Percentiles: []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99}}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(l) > TextWidth {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
}

// Latencies keep three significant digits, and roll over to the next unit
// when rounding reaches it: 999.9us is 1.00ms, never 1000us.
func TestLatencyFormat(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{999900 * time.Nanosecond, "1.00ms"},
		{999400 * time.Nanosecond, "999us"},
		{999949 * time.Microsecond, "1.00s"},
		{9999 * time.Microsecond, "10.0ms"},
		{99990 * time.Microsecond, "100ms"},
		{12345 * time.Nanosecond, "12.3us"},
		{850 * time.Nanosecond, "0.85us"},
		{2 * time.Second, "2.00s"},
		{0, "0.00us"},
	} {
		if got := Latency(results.Duration(tc.d)); got != tc.want {
			t.Errorf("Latency(%v) = %s, want %s", tc.d, got, tc.want)
		}
	}
}

// The generator's line: its CPU time with the digits a short run needs,
// and a share that is that time over the window — or, over a window too
// short to say anything, says so.
func TestGeneratorLine(t *testing.T) {
	run := &results.Run{}
	run.Summary.Duration = results.Duration(3910 * time.Microsecond)
	run.Generator = results.Cost{CPUSeconds: 0.0041, UserSeconds: 0.003, SysSeconds: 0.0011, CPUs: 2, Utilization: 0.52, PeakRSS: 50 << 20}
	if got, want := generatorLine(run), "0.0041 CPU-s (user 0.003, sys 0.0011), a 3.91ms window: too short to measure its share of 2 CPU(s), peak RSS 50.0 MiB"; got != want {
		t.Errorf("short run:\n got %s\nwant %s", got, want)
	}
	run.Summary.Duration = results.Duration(2 * time.Second)
	run.Generator = results.Cost{CPUSeconds: 0.08, UserSeconds: 0.05, SysSeconds: 0.03, CPUs: 2, Utilization: 0.02, PeakRSS: 50 << 20}
	if got, want := generatorLine(run), "0.08 CPU-s (user 0.05, sys 0.03), 2% of 2 CPU(s), peak RSS 50.0 MiB"; got != want {
		t.Errorf("2 s run:\n got %s\nwant %s", got, want)
	}
}
