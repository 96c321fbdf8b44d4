package compare

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"loadgen/results"
	"loadgen/results/store"
)

// runOf is a run with the given RPS and latency percentiles in ms; every
// compared figure scales together with lat.
func runOf(rps, p99 float64) *results.Run {
	r := sampleRun()
	r.Summary.RPS = rps
	l := &r.Summary.Latency
	l.P50, l.P90, l.P95, l.P99, l.P999 = ms(p99/10), ms(p99/4), ms(p99/2), ms(p99), ms(p99*2)
	return r
}

func verdicts(c Comparison) map[string]Verdict {
	out := map[string]Verdict{}
	for _, r := range c.Rows {
		out[r.Metric] = r.Verdict
	}
	return out
}

func TestRuns(t *testing.T) {
	opt := Options{MaxRegression: 0.10}
	for _, tc := range []struct {
		name     string
		a, b     *results.Run
		rps, p99 Verdict
	}{
		{"planted 30% regression", runOf(10000, 20), runOf(7000, 26), Regression, Regression},
		{"within the noise band", runOf(10000, 20), runOf(9700, 20.8), Same, Same},
		{"worse within the limit", runOf(10000, 20), runOf(9200, 21.6), Worse, Worse},
		{"better", runOf(10000, 20), runOf(13000, 14), Better, Better},
		{"exactly at the limit", runOf(10000, 20), runOf(9000, 22), Worse, Worse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Runs(tc.a, tc.b, opt)
			v := verdicts(c)
			if v["rps"] != tc.rps || v["p99"] != tc.p99 {
				t.Errorf("rps %s, p99 %s; want %s, %s\n%+v", v["rps"], v["p99"], tc.rps, tc.p99, c.Rows)
			}
			if v["p50"] != tc.p99 || v["p90"] != tc.p99 || v["p99.9"] != tc.p99 {
				t.Errorf("the other percentiles: %v", v)
			}
			if got := len(c.Regressions()) > 0; got != (tc.rps == Regression) {
				t.Errorf("Regressions() = %v", c.Regressions())
			}
			if c.Rows[0].Step != "http://127.0.0.1:8080/get" {
				t.Errorf("step %q", c.Rows[0].Step)
			}
		})
	}
}

func TestRunsOptions(t *testing.T) {
	a, b := runOf(10000, 20), runOf(9200, 21.6) // 8% worse
	if v := verdicts(Runs(a, b, Options{Noise: 0.10, MaxRegression: 0.05})); v["p99"] != Same {
		t.Errorf("8%% within a 10%% noise band: %v", v)
	}
	if v := verdicts(Runs(a, b, Options{MaxRegression: 0.05})); v["p99"] != Regression || v["rps"] != Regression {
		t.Errorf("8%% beyond a 5%% limit: %v", v)
	}
	if v := verdicts(Runs(a, b, Options{})); v["p99"] != Regression {
		t.Errorf("no limit: any real worsening is a regression: %v", v)
	}
}

func TestRunsNotes(t *testing.T) {
	a, b := runOf(10000, 20), runOf(10000, 20)
	b.Config.Connections = 32
	b.Generator.Saturated = true
	c := Runs(a, b, Options{})
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"connections 16 vs 32", "B: the generator was saturated in the run"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

func TestRunsZeroFigures(t *testing.T) {
	a, b := runOf(0, 0), runOf(0, 0)
	for _, r := range Runs(a, b, Options{}).Rows {
		if r.Verdict != Same || r.Ratio != 1 {
			t.Errorf("%+v", r)
		}
	}
}

// step is one repeat of a sweep step.
func step(path, rung string, payload, repeat int, rps, p99 float64) *results.Step {
	st := &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Path: path, Rung: rung, Payload: payload, Repeat: repeat}
	st.ID = fmt.Sprintf("%s_%s_%s_closed_r%d", path, rung, sizeLabel(payload), repeat)
	if rps < 0 {
		st.Failed = "cannot connect to 127.0.0.1:1"
		return st
	}
	st.Run = runOf(rps, p99)
	return st
}

func writeSweep(t *testing.T, steps []*results.Step) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, store.StepsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Spec: []byte("{}")}
	for _, st := range steps {
		m.Steps = append(m.Steps, st.ID)
		if err := store.WriteJSON(filepath.Join(dir, store.StepsDir, st.ID+".json"), st); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.WriteJSON(filepath.Join(dir, store.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sweepPair is two sweeps of three repeats:
//   - nginx c1t1: B's p99 median is 29% up, but the repeats' spreads overlap: noise;
//   - nginx c4t4: a planted 30% regression, repeats tight;
//   - baseline c1t1: 3% apart, single-repeat-like: noise;
//   - nginx c16t16: ran in A, failed in every repeat of B;
//   - nginx c64t64: only in A (B stopped early).
func sweepPair(t *testing.T) (string, string) {
	var a, b []*results.Step
	for i, rep := range []int{1, 2, 3} {
		a = append(a,
			step("baseline", "c1t1", 100, rep, 1000, []float64{10, 10.1, 10.2}[i]),
			step("nginx", "c1t1", 100, rep, 900, []float64{10, 10.5, 14}[i]),
			step("nginx", "c4t4", 100, rep, 3000, []float64{20, 20.2, 20.4}[i]),
			step("nginx", "c16t16", 100, rep, 5000, 40),
			step("nginx", "c64t64", 100, rep, 6000, 80),
		)
		b = append(b,
			step("baseline", "c1t1", 100, rep, 1000, []float64{10.3, 10.4, 10.5}[i]),
			step("nginx", "c1t1", 100, rep, 900, []float64{13, 13.5, 14}[i]),
			step("nginx", "c4t4", 100, rep, []float64{2100, 2120, 2140}[i], []float64{26, 26.2, 26.5}[i]),
			step("nginx", "c16t16", 100, rep, -1, 0),
		)
	}
	return writeSweep(t, a), writeSweep(t, b)
}

func TestSweeps(t *testing.T) {
	aDir, bDir := sweepPair(t)
	c, err := Sweeps(aDir, bDir, Options{MaxRegression: 0.10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Verdict{}
	for _, r := range c.Rows {
		got[r.Step+" "+r.Metric] = r.Verdict
	}
	for k, want := range map[string]Verdict{
		"baseline c1t1 100B p99":   Holds,       // 3% up, every repeat of B above A's: within the noise band
		"nginx c1t1 100B p99":      WithinNoise, // median 13.5 vs 10.5, but the interval, 0.93..1.4, spans 1.1
		"nginx c1t1 100B rps":      Holds,
		"nginx c4t4 100B p99":      Regression,
		"nginx c4t4 100B p50":      Regression,
		"nginx c4t4 100B rps":      Regression,
		"nginx c16t16 100B run":    Regression,
		"nginx c64t64 100B run":    Missing,
		"baseline c1t1 100B p99.9": Holds,
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	var regs []string
	for _, r := range c.Regressions() {
		regs = append(regs, r.Step+" "+r.Metric)
	}
	if want := "nginx c4t4 100B rps,nginx c4t4 100B p50,nginx c4t4 100B p90,nginx c4t4 100B p95,nginx c4t4 100B p99,nginx c4t4 100B p99.9,nginx c16t16 100B run"; strings.Join(regs, ",") != want {
		t.Errorf("regressions %v\nwant %s", regs, want)
	}
	for _, r := range c.Rows {
		if r.Step == "nginx c4t4 100B" && r.Metric == "p99" {
			if r.A.N != 3 || r.B.N != 3 || r.A.Median != float64(ms(20.2)) || r.B.Min != float64(ms(26)) {
				t.Errorf("stats %+v", r)
			}
		}
		if r.Metric == "run" && r.Step == "nginx c16t16 100B" && !strings.Contains(r.Note, "failed in B: cannot connect") {
			t.Errorf("note %q", r.Note)
		}
	}
	if c.A != aDir || c.B != bDir || !c.Matched() {
		t.Errorf("A %q B %q matched %v", c.A, c.B, c.Matched())
	}

	// Reversed, B is A's improvement: nothing regressed; the step that
	// failed in A is missing, not better.
	c, err = Sweeps(bDir, aDir, Options{MaxRegression: 0.10})
	if err != nil {
		t.Fatal(err)
	}
	if regs := c.Regressions(); len(regs) != 0 {
		t.Errorf("reversed: regressions %v", regs)
	}
}

func TestSweepsBadInput(t *testing.T) {
	aDir, _ := sweepPair(t)
	trunc := writeSweep(t, []*results.Step{step("baseline", "c1t1", 100, 1, 1000, 10)})
	file := filepath.Join(trunc, store.StepsDir, "baseline_c1t1_100B_closed_r1.json")
	b, _ := os.ReadFile(file)
	os.WriteFile(file, b[:len(b)/2], 0o644)
	for name, tc := range map[string]struct{ a, b, msg string }{
		"missing":   {aDir, filepath.Join(aDir, "nope"), "not a sweep's results directory"},
		"truncated": {aDir, trunc, file},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Sweeps(tc.a, tc.b, Options{}); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want one saying %q", err, tc.msg)
			}
		})
	}
}

func TestStepsNothingMatched(t *testing.T) {
	c := Steps([]*results.Step{step("a", "c1t1", 100, 1, 1, 1)}, []*results.Step{step("b", "c1t1", 100, 1, 1, 1)}, Options{})
	if c.Matched() || len(c.Rows) != 2 || c.Rows[1].Note != "not in A" {
		t.Errorf("%+v", c)
	}
}

func TestWriteText(t *testing.T) {
	aDir, bDir := sweepPair(t)
	c, err := Sweeps(aDir, bDir, Options{MaxRegression: 0.10})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"A: " + aDir, "regression beyond 10%: the whole interval of B/A past it; within noise: the interval spans it",
		"intervals: 90% confidence, of B/A over the repeats",
		"step", "metric", "B/A", "interval", "verdict",
		"nginx c4t4 100B", "20.2ms [20ms..20.4ms ×3]", "1.30", "1.27..1.32", "REGRESSION", "0.93..1.40  within noise", "holds",
		"REGRESSION: failed in B: cannot connect", "missing: not in B", "999/s ×3", "errors  0.2% ×3",
		"7 regressions beyond 10% (5 within noise, 10 holds, 1 missing)",
		"nginx c4t4 100B rps: 2997/s → 2118/s (×0.71 [0.70..0.71] 90%, REGRESSION)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Columns line up: every "verdict" column starts at the same offset.
	lines := strings.Split(out, "\n")
	col := -1
	for _, l := range lines {
		if strings.HasPrefix(l, "step ") {
			col = utf8.RuneCountInString(l[:strings.Index(l, "verdict")])
		}
	}
	for _, l := range lines {
		i := strings.Index(l, "REGRESSION")
		if i < 0 || strings.HasPrefix(l, "  ") || strings.Contains(l, "regression") || strings.Contains(l, " run ") {
			continue
		}
		if i = utf8.RuneCountInString(l[:i]); i != col {
			t.Errorf("verdict at column %d, want %d: %q", i, col, l)
		}
	}
}

func ExampleWriteText() {
	a, b := runOf(10000, 20), runOf(7000, 26)
	WriteText(os.Stdout, Runs(a, b, Options{MaxRegression: 0.10}))
	// Output:
	// regression beyond 10%: the whole interval of B/A past it; within noise: the interval spans it
	// point verdicts (too few repeats for an interval): B/A against a noise band of ±5%
	//
	// step                       metric  A       B       B/A   interval  verdict
	// http://127.0.0.1:8080/get  rps     9990/s  6993/s  0.70  -         REGRESSION (point)
	//                            errors  0.2%    0.2%    1.00  -         same (point)
	//                            p50     2ms     2.6ms   1.30  -         REGRESSION (point)
	//                            p90     5ms     6.5ms   1.30  -         REGRESSION (point)
	//                            p95     10ms    13ms    1.30  -         REGRESSION (point)
	//                            p99     20ms    26ms    1.30  -         REGRESSION (point)
	//                            p99.9   40ms    52ms    1.30  -         REGRESSION (point)
	//
	// 6 regressions beyond 10% (1 same (point)):
	//   http://127.0.0.1:8080/get rps: 9990/s → 6993/s (×0.70, REGRESSION (point))
	//   http://127.0.0.1:8080/get p50: 2ms → 2.6ms (×1.30, REGRESSION (point))
	//   http://127.0.0.1:8080/get p90: 5ms → 6.5ms (×1.30, REGRESSION (point))
	//   http://127.0.0.1:8080/get p95: 10ms → 13ms (×1.30, REGRESSION (point))
	//   http://127.0.0.1:8080/get p99: 20ms → 26ms (×1.30, REGRESSION (point))
	//   http://127.0.0.1:8080/get p99.9: 40ms → 52ms (×1.30, REGRESSION (point))
	// note: one repeat a side: 7 figures marked (point): noise cannot be told from a change; their verdicts compare B with A and the noise band alone, and a REGRESSION (point) fails the check as before; loadgen sweep --repeats 3 on both sides gives each ratio an interval and judges by it
}

// What the watched processes cost is compared per request: B's proxy uses
// fewer cores than A's, but serving half the requests with them it costs
// more per request, a regression; its memory is the same.
func TestSweepsCostPerRequest(t *testing.T) {
	watched := func(st *results.Step, cores float64, mib int64) *results.Step {
		st.Watched = []results.ProcessCost{{Name: "nginx", Role: "proxy", Samples: 10, CPUMean: cores, MemMean: mib << 20}}
		return st
	}
	var a, b []*results.Step
	for i, rep := range []int{1, 2, 3} {
		a = append(a, watched(step("nginx", "c4t4", 100, rep, 3000, 20), []float64{0.30, 0.31, 0.29}[i], 12))
		b = append(b, watched(step("nginx", "c4t4", 100, rep, 1500, 20), []float64{0.21, 0.22, 0.20}[i], 12))
	}
	c := Steps(a, b, Options{MaxRegression: 0.10})
	got := map[string]Row{}
	for _, r := range c.Rows {
		got[r.Metric] = r
	}
	cpu, mem := got["cpu/1k.nginx"], got["MiB.nginx"]
	if cpu.Verdict != Regression || math.Abs(cpu.A.Median-0.1) > 1e-9 || math.Abs(cpu.B.Median-0.14) > 1e-9 {
		t.Errorf("cpu/1k: %+v, want 0.1 → 0.14 cores per 1000 req/s, a regression", cpu)
	}
	if mem.Verdict != Holds || mem.A.Median != 12 {
		t.Errorf("MiB: %+v, want 12 on both sides", mem)
	}
	var out bytes.Buffer
	if err := WriteText(&out, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cpu/1k.nginx  0.1 cores [0.0967..0.103 cores ×3]") || !strings.Contains(out.String(), "12MiB ×3") {
		t.Errorf("text:\n%s", out.String())
	}
}

// failing is runOf with a share of its requests answered with an error
// status (fail of the Requests).
func failing(rps, p99 float64, fail float64) *results.Run {
	r := runOf(rps, p99)
	s := &r.Summary
	s.Errors = results.Errors{}
	s.Errors.Status = int64(fail * float64(s.Requests))
	return r
}

// Failures are never better: B answering errors faster is a regression of
// errors and of the requests answered without one; a B in which nothing
// succeeded is one row, a regression, with no figures of failures; a
// rise within the tolerance is noise.
func TestRunsErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		a, b      *results.Run
		rps, errs Verdict
	}{
		{"503s in 5% of B, answered fast", failing(10000, 20, 0), failing(10400, 10, 0.05), Same, Regression},
		{"503s in 30% of B, answered fast", failing(10000, 20, 0), failing(20000, 5, 0.30), Better, Regression},
		{"half of the requests failed", failing(10000, 20, 0), failing(10000, 20, 0.5), Regression, Regression},
		{"a rise within 0.1 point", failing(10000, 20, 0.001), failing(10000, 20, 0.0015), Same, Same},
		{"fewer failures", failing(10000, 20, 0.05), failing(10000, 20, 0), Better, Better},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdicts(Runs(tc.a, tc.b, Options{MaxRegression: 0.10}))
			if v["rps"] != tc.rps || v["errors"] != tc.errs {
				t.Errorf("rps %s, errors %s; want %s, %s", v["rps"], v["errors"], tc.rps, tc.errs)
			}
		})
	}
	c := Runs(failing(10000, 20, 0), failing(90000, 1, 1), Options{})
	if len(c.Rows) != 1 || c.Rows[0].Verdict != Regression || !strings.Contains(c.Rows[0].Note, "no request succeeded in B") {
		t.Fatalf("every request of B failed: %+v", c.Rows)
	}
	if len(c.Regressions()) != 1 {
		t.Errorf("regressions %+v", c.Regressions())
	}
	if c := Runs(failing(10000, 20, 1), failing(10000, 20, 1), Options{}); len(c.Rows) != 1 || c.Rows[0].Verdict != Missing || c.Matched() {
		t.Errorf("nothing succeeded on either side: %+v", c.Rows)
	}
}

// In a sweep, a step whose every repeat answered nothing but errors in B
// is a regression, and its proxy's cost per request is not compared.
func TestStepsNothingSucceeded(t *testing.T) {
	var a, b []*results.Step
	for rep := 1; rep <= 2; rep++ {
		sa, sb := step("nginx", "c4t4", 100, rep, 1000, 2), step("nginx", "c4t4", 100, rep, 3000, 1)
		sb.Run.Summary.Errors = results.Errors{Status: sb.Run.Summary.Requests}
		a, b = append(a, sa), append(b, sb)
	}
	c := Steps(a, b, Options{})
	if len(c.Rows) != 1 || c.Rows[0].Verdict != Regression || !strings.Contains(c.Rows[0].Note, "no request succeeded in B") {
		t.Fatalf("rows %+v", c.Rows)
	}
}
