package merge

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// recorded is what one generator saw: its histograms, and the same values
// recorded into the union (one generator over all of them).
type recorded struct {
	lat, unc, conn, ok, fail *hist.Histogram
}

func newRecorded() *recorded {
	return &recorded{hist.New(), hist.New(), hist.New(), hist.New(), hist.New()}
}

func encode(t testing.TB, h *hist.Histogram) string {
	t.Helper()
	s, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// workerRuns records random latencies (log-normal, with a tail of
// timeouts) into n workers and into one union recorder.
func workerRuns(t testing.TB, n int, seed uint64) ([]Input, *recorded, int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	union := newRecorded()
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var in []Input
	var total int64
	for w := range n {
		r := newRecorded()
		count := 2000 + rng.IntN(3000)
		var failed int64
		for range count {
			d := time.Duration(float64(200*time.Microsecond) * (1 + rng.ExpFloat64()*float64(w+1)))
			u := d - time.Duration(rng.Int64N(int64(d/2)))
			r.lat.Record(d)
			union.lat.Record(d)
			r.unc.Record(u)
			union.unc.Record(u)
			if rng.IntN(50) == 0 {
				r.fail.Record(d)
				union.fail.Record(d)
				failed++
			} else {
				r.ok.Record(d)
				union.ok.Record(d)
			}
		}
		for range 1 + w {
			c := time.Duration(50+rng.IntN(500)) * time.Microsecond
			r.conn.Record(c)
			union.conn.Record(c)
		}
		total += int64(count)
		run := &results.Run{
			Schema: results.SchemaVersion, Tool: "loadgen",
			Config: results.Config{Target: "http://t:8080/get", Protocol: "http1", Connections: 4 + w%2, Threads: 2,
				Duration: results.Duration(10 * time.Second), Timeout: results.Duration(time.Second), Rate: 500},
			Env:   results.Env{Hostname: "worker-" + string(rune('a'+w))},
			Start: base.Add(time.Duration(w) * 3 * time.Millisecond), End: base.Add(10*time.Second + time.Duration(w)*time.Millisecond),
			Summary: results.Summary{
				Requests: int64(count) - failed, BytesRead: int64(count) * 100, BytesWritten: int64(count) * 40,
				Status: map[int]int64{200: int64(count) - failed - 3, 503: 3}, Non2xx3xx: 3,
				Errors:      results.Errors{Timeout: failed, Status: 3},
				Connections: results.Connections{Established: int64(1 + w), Measured: int64(1 + w)},
				Pacing:      &results.Pacing{Asked: 500, Sent: int64(count), Late: int64(w), MaxLag: results.Duration(time.Duration(w) * time.Millisecond)},
				ThreadRPS:   results.Spread{Samples: 100, Mean: 250 + float64(w), StdDev: 10, Max: 300 + float64(w), WithinStdDev: 70},
			},
			Generator: results.Cost{CPUSeconds: 2, UserSeconds: 1.5, SysSeconds: 0.5, PeakRSS: int64(40+w) << 20, CPUs: 2,
				Utilization: 0.1, Saturated: w == n-1},
			Histograms: results.Encoded{Latency: encode(t, r.lat), Uncorrected: encode(t, r.unc), Connect: encode(t, r.conn),
				Succeeded: encode(t, r.ok), Failed: encode(t, r.fail)},
		}
		in = append(in, Input{Source: run.Env.Hostname, Run: run})
	}
	return in, union, total
}

// TestMergeEqualsOneRunOverTheUnion checks that N workers' runs merge to
// exactly what one generator recording every value would report: every count,
// every percentile, min, max, mean and standard deviation.
func TestMergeEqualsOneRunOverTheUnion(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		in, union, total := workerRuns(t, n, uint64(n))
		got, workers, err := Runs(in)
		if err != nil {
			t.Fatal(err)
		}
		s := got.Summary
		if s.Latency != results.Reduce(union.lat) {
			t.Errorf("n=%d latency\n got %+v\nwant %+v", n, s.Latency, results.Reduce(union.lat))
		}
		for name, pair := range map[string]struct {
			got  *results.Latency
			want *hist.Histogram
		}{"uncorrected": {s.Uncorrected, union.unc}, "connect": {s.Connect, union.conn},
			"succeeded": {s.Succeeded, union.ok}, "failed": {s.Failed, union.fail}} {
			if pair.got == nil || *pair.got != results.Reduce(pair.want) {
				t.Errorf("n=%d %s: got %+v, want %+v", n, name, pair.got, results.Reduce(pair.want))
			}
		}
		if s.Latency.Count != total || s.Succeeded.Count+s.Failed.Count != total {
			t.Errorf("n=%d: latency counts %d = %d + %d, want %d", n, s.Latency.Count, s.Succeeded.Count, s.Failed.Count, total)
		}
		// The merged histogram itself, decoded again, is the union.
		h, err := hist.Decode(got.Histograms.Latency)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(h.Buckets(), union.lat.Buckets()) {
			t.Errorf("n=%d: merged latency buckets differ from the union's", n)
		}
		var sent, req, conns int64
		var status200 int64
		for _, x := range in {
			sent += x.Run.Summary.Pacing.Sent
			req += x.Run.Summary.Requests
			status200 += x.Run.Summary.Status[200]
			conns += int64(x.Run.Config.Connections)
		}
		if s.Requests != req || s.Pacing.Sent != sent || s.Status[200] != status200 || int64(got.Config.Connections) != conns {
			t.Errorf("n=%d: sums: requests %d/%d sent %d/%d 200s %d/%d connections %d/%d", n, s.Requests, req, s.Pacing.Sent, sent, s.Status[200], status200, got.Config.Connections, conns)
		}
		if got.Config.Rate != 500*float64(n) {
			t.Errorf("n=%d: rate %v, want the sum %v", n, got.Config.Rate, 500*float64(n))
		}
		// Each worker's rate is over its own window; the merge adds them
		// up, and its duration is their mean window.
		var rps, windows float64
		for _, x := range in {
			w := x.Run.End.Sub(x.Run.Start)
			rps += float64(x.Run.Summary.Requests) / w.Seconds()
			windows += float64(w)
		}
		if want := time.Duration(windows / float64(n)); s.Duration.D() != want || !near(s.RPS, rps) {
			t.Errorf("n=%d: window %v rps %v, want %v and %v", n, s.Duration, s.RPS, want, rps)
		}
		if !got.Start.Equal(in[0].Run.Start) || !got.End.Equal(in[n-1].Run.End) {
			t.Errorf("n=%d: start %v end %v, want the union of the windows", n, got.Start, got.End)
		}
		if len(workers) != n || !got.Generator.Saturated || got.Generator.CPUSeconds != 2*float64(n) {
			t.Errorf("n=%d: %d workers, generator %+v: want every worker kept, CPU summed, saturated (the last one was)", n, len(workers), got.Generator)
		}
		if !strings.Contains(strings.Join(got.Notes, "\n"), "saturated") {
			t.Errorf("n=%d: notes %q do not say a worker was saturated", n, got.Notes)
		}
		if s.ThreadRPS.Samples != 100*n || s.ThreadRPS.Max != 300+float64(n-1) {
			t.Errorf("n=%d: thread rps %+v", n, s.ThreadRPS)
		}
	}
}

// near reports whether a and b are equal but for rounding (a sum of quotients
// against a quotient of sums).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestMergeSpreadIsExact checks that pooled per-thread samples give the mean
// and the sample standard deviation of all samples together.
func TestMergeSpreadIsExact(t *testing.T) {
	groups := [][]float64{{1, 2, 3, 4}, {10, 12}, {5}}
	var in []Input
	var all []float64
	for _, g := range groups {
		in = append(in, Input{Run: &results.Run{Summary: results.Summary{ThreadRPS: spreadOf(g)}}})
		all = append(all, g...)
	}
	got, want := spreads(in), spreadOf(all)
	if d := got.Mean - want.Mean; d*d > 1e-18 || (got.StdDev-want.StdDev)*(got.StdDev-want.StdDev) > 1e-18 || got.Samples != want.Samples || got.Max != want.Max {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func spreadOf(xs []float64) results.Spread {
	var s results.Spread
	s.Samples = len(xs)
	for _, x := range xs {
		s.Mean += x / float64(len(xs))
		s.Max = max(s.Max, x)
	}
	var m2 float64
	for _, x := range xs {
		m2 += (x - s.Mean) * (x - s.Mean)
	}
	if len(xs) > 1 {
		s.StdDev = sqrt(m2 / float64(len(xs)-1))
	}
	return s
}

func sqrt(x float64) float64 {
	z := x
	for range 100 {
		if z == 0 {
			return 0
		}
		z -= (z*z - x) / (2 * z)
	}
	return z
}

func TestMergeAbsentHistogramsAreEmpty(t *testing.T) {
	in, union, _ := workerRuns(t, 2, 9)
	in[1].Run.Histograms.Failed = "" // the engine left it out: none failed there
	in[1].Run.Histograms.Uncorrected = ""
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.Latency != results.Reduce(union.lat) {
		t.Error("latency changed when another field was absent")
	}
	h, _ := hist.Decode(in[0].Run.Histograms.Failed)
	if got.Summary.Failed == nil || got.Summary.Failed.Count != h.Count() {
		t.Errorf("failed %+v: want worker 0's alone (%d)", got.Summary.Failed, h.Count())
	}
}

func TestMergeRefusesOtherLoads(t *testing.T) {
	for name, change := range map[string]func(*results.Run){
		"target":   func(r *results.Run) { r.Config.Target = "http://other:8080/get" },
		"protocol": func(r *results.Run) { r.Config.Protocol = "h2c" },
		"duration": func(r *results.Run) { r.Config.Duration = results.Duration(time.Minute) },
		"schema":   func(r *results.Run) { r.Schema = 1 },
	} {
		in, _, _ := workerRuns(t, 2, 3)
		change(in[1].Run)
		_, _, err := Runs(in)
		if err == nil {
			t.Errorf("%s: merged runs of different loads", name)
			continue
		}
		if !strings.Contains(err.Error(), in[1].Source) {
			t.Errorf("%s: %v does not name the file", name, err)
		}
	}
	// The shares differ per worker by design.
	in, _, _ := workerRuns(t, 2, 3)
	in[1].Run.Config.Connections, in[1].Run.Config.Threads, in[1].Run.Config.Rate = 99, 7, 1
	if _, _, err := Runs(in); err != nil {
		t.Errorf("different shares refused: %v", err)
	}
	if _, _, err := Runs(nil); err == nil {
		t.Error("nothing merged without an error")
	}
}

func TestDecodeChecksHistograms(t *testing.T) {
	in, _, _ := workerRuns(t, 1, 4)
	b, _ := json.Marshal(in[0].Run)
	if _, err := Decode("w0.json", b); err != nil {
		t.Fatal(err)
	}
	bad := *in[0].Run
	bad.Histograms.Connect = "HISTFAAAAnot-base64"
	b, _ = json.Marshal(&bad)
	if _, err := Decode("w0.json", b); err == nil || !strings.Contains(err.Error(), "histograms.connect") {
		t.Errorf("a broken histogram: %v", err)
	}
	if _, err := Decode("x.json", []byte(`{"schema":2,"tool":"wrk"}`)); err == nil {
		t.Error("a file of another tool was accepted")
	}
}

// TestMergeKeepsTheLabels checks that the merged run carries the labels its
// runs share (k8s run's workers are given the same); one not alike on every
// run is left out, and a note says so.
func TestMergeKeepsTheLabels(t *testing.T) {
	in, _, _ := workerRuns(t, 3, 5)
	for i, x := range in {
		x.Run.Labels = results.Labels{"mesh": "istio", "build": "42", "pod": x.Source}
		if i == 2 {
			x.Run.Labels["extra"] = "y"
		}
	}
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := (results.Labels{"mesh": "istio", "build": "42"}); !got.Labels.Equal(want) {
		t.Errorf("labels %v, want %v", got.Labels, want)
	}
	if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, "left out: extra, pod") }) {
		t.Errorf("no note of the labels left out: %q", got.Notes)
	}
}

// A UDP run's datagrams are counts: the merge adds them, and the span is
// the longest worker's.
func TestMergeAddsDatagrams(t *testing.T) {
	in, _, _ := workerRuns(t, 3, 11)
	var want results.Datagrams
	for i, w := range in {
		if i == 2 {
			continue // a worker without counts (an older one): counts nothing
		}
		g := results.Datagrams{Sent: int64(100 * (i + 1)), Received: int64(90 * (i + 1)), ReceivedBytes: int64(9000 * (i + 1)),
			Lost: int64(8 * (i + 1)), Unknown: int64(2 * (i + 1)), Span: results.Duration(time.Duration(10+i) * time.Second)}
		w.Run.Summary.Datagrams = &g
		want.Sent += g.Sent
		want.Received += g.Received
		want.ReceivedBytes += g.ReceivedBytes
		want.Lost += g.Lost
		want.Unknown += g.Unknown
		want.Span = max(want.Span, g.Span)
	}
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.Datagrams == nil || *got.Summary.Datagrams != want {
		t.Errorf("merged datagrams %+v, want %+v", got.Summary.Datagrams, want)
	}
}
