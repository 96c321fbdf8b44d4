package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// compareCLI runs `loadgen compare …` in-process. Until main.go registers
// the command, it adds it to a root of its own and maps errors to exit
// statuses as execute does.
func compareCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	args = append([]string{"compare"}, args...)
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	if c, _, err := root.Find(args); err == nil && c != root && c.Name() == "compare" {
		code := execute(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
	root.AddCommand(newCompareCmd())
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code := exitOK
	if err != nil {
		var fail exitError
		var rf runFailure
		switch {
		case errors.As(err, &fail):
			return fail.code, out.String(), errb.String()
		case errors.As(err, &rf):
			code = exitFail
			if rf.code != 0 {
				code = int(rf.code)
			}
		default:
			code = exitUsage
		}
		fmt.Fprintf(&errb, "loadgen: %v\n", err)
	}
	return code, out.String(), errb.String()
}

func msDur(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }

// cmpRun is a run with the given RPS and p99 (ms); the other percentiles
// scale with p99.
func cmpRun(rps, p99 float64) *results.Run {
	return &results.Run{
		Schema: results.SchemaVersion, Tool: "loadgen",
		Config: results.Config{Target: "http://127.0.0.1:8080/get", Protocol: "http1", Connections: 16, Threads: 2,
			Duration: results.Duration(10 * time.Second)},
		Summary: results.Summary{Requests: int64(rps * 10), Duration: results.Duration(10 * time.Second), RPS: rps,
			Latency: results.Latency{Count: int64(rps * 10), P50: msDur(p99 / 10), P75: msDur(p99 / 5), P90: msDur(p99 / 4), P95: msDur(p99 / 2),
				P99: msDur(p99), P999: msDur(p99 * 2), P9999: msDur(p99 * 3), Mean: msDur(p99 / 8), Max: msDur(p99 * 4)}},
		Generator: results.Cost{CPUs: 2, Utilization: 0.25},
	}
}

func cmpWriteRun(t *testing.T, dir, name string, run *results.Run) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := store.WriteRun(p, run); err != nil {
		t.Fatal(err)
	}
	return p
}

// cmpSweep writes a sweep results directory: for each path, one c4t4 100 B
// step of the given p99s (one per repeat) at 1000 req/s.
func cmpSweep(t *testing.T, p99s map[string][]float64) string {
	t.Helper()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, store.StepsDir), 0o755)
	m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Spec: []byte("{}")}
	for path, reps := range p99s {
		m.Paths = append(m.Paths, path)
		for i, p99 := range reps {
			st := &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Path: path, Rung: "c4t4", Connections: 4, Threads: 4,
				Payload: 100, Repeat: i + 1, ID: fmt.Sprintf("%s_c4t4_100B_closed_r%d", path, i+1)}
			if p99 < 0 {
				st.Failed = "cannot connect to 127.0.0.1:1"
			} else {
				st.Run = cmpRun(1000, p99)
			}
			m.Steps = append(m.Steps, st.ID)
			if err := store.WriteJSON(filepath.Join(dir, store.StepsDir, st.ID+".json"), st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.WriteJSON(filepath.Join(dir, store.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompareRuns(t *testing.T) {
	dir := t.TempDir()
	a := cmpWriteRun(t, dir, "a.json", cmpRun(10000, 20))
	slow := cmpWriteRun(t, dir, "slow.json", cmpRun(7000, 26))     // planted 30% regression
	noisy := cmpWriteRun(t, dir, "noisy.json", cmpRun(9800, 20.6)) // within 5%
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    []string
		stderr string
	}{
		{"regression", []string{a, slow}, exitBreached, []string{"A: " + a, "B: " + slow, "REGRESSION", "0.70", "1.30", "6 regressions beyond 10%"},
			"6 regressions beyond 10%: http://127.0.0.1:8080/get rps, http://127.0.0.1:8080/get p50, http://127.0.0.1:8080/get p90, and 3 more"},
		{"noise", []string{a, noisy}, exitOK, []string{"same (point)", "no regression beyond 10%", "one repeat a side"}, ""},
		{"same file", []string{a, a}, exitOK, []string{"1.00", "no regression"}, ""},
		{"within a wider limit", []string{a, slow, "--max-regression", "50%"}, exitOK, []string{"worse", "no regression beyond 50%"}, ""},
		{"within a wider noise band", []string{a, slow, "--noise", "40%"}, exitOK, []string{"same (point)", "noise band of ±40%"}, ""},
		{"improvement", []string{slow, a}, exitOK, []string{"better"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := compareCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if tc.stderr == "" && stderr != "" {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
}

func TestCompareSweeps(t *testing.T) {
	a := cmpSweep(t, map[string][]float64{"baseline": {10, 10.1, 10.2}, "nginx": {20, 20.2, 20.4}, "dead": {5}})
	b := cmpSweep(t, map[string][]float64{"baseline": {10.3, 10.4, 10.2}, "nginx": {26, 26.3, 26.6}, "dead": {-1}})
	code, out, stderr := compareCLI(t, a, b)
	if code != exitBreached {
		t.Fatalf("exit %d, want 99\n%s%s", code, out, stderr)
	}
	for _, w := range []string{"nginx c4t4 100B", "20.2ms [20ms..20.4ms ×3]", "REGRESSION", "REGRESSION: failed in B: cannot connect"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "baseline") && !strings.Contains(l, "holds") {
			t.Errorf("baseline moved within noise but reads %q", l)
		}
	}
	if !strings.Contains(stderr, "6 regressions beyond 10%") {
		t.Errorf("stderr %q", stderr)
	}

	// Repeats whose spreads overlap are noise, however far apart the
	// medians: the interval of B/A spans the limit.
	c := cmpSweep(t, map[string][]float64{"nginx": {20, 20.5, 30}})
	d := cmpSweep(t, map[string][]float64{"nginx": {28, 29, 30}})
	if code, out, stderr := compareCLI(t, c, d); code != exitOK || !strings.Contains(out, "0.93..1.50  within noise") {
		t.Errorf("overlapping repeats: exit %d\n%s%s", code, out, stderr)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	good := cmpWriteRun(t, dir, "good.json", cmpRun(1000, 10))
	b, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, bytes.Replace(b, fmt.Appendf(nil, `"schema": %d`, results.SchemaVersion), []byte(`"schema": 7`), 1), 0o644)
	sweepDir := cmpSweep(t, map[string][]float64{"a": {1}})
	otherSweep := cmpSweep(t, map[string][]float64{"b": {1}})
	failedStep := filepath.Join(cmpSweep(t, map[string][]float64{"x": {-1}}), store.StepsDir, "x_c4t4_100B_closed_r1.json")
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"one argument", []string{good}, "two results"},
		{"three arguments", []string{good, good, good}, "two results"},
		{"missing file", []string{good, filepath.Join(dir, "nope.json")}, filepath.Join(dir, "nope.json") + " does not exist"},
		{"truncated", []string{good, trunc}, trunc + ": not a loadgen result"},
		{"newer schema", []string{newer, good}, newer + ": result schema 7 is newer"},
		{"run and sweep", []string{good, sweepDir}, "is a run file but " + sweepDir + " is a sweep directory"},
		{"not a sweep", []string{dir, sweepDir}, dir + " is not a sweep's results directory"},
		{"manifest as a run", []string{good, filepath.Join(sweepDir, store.ManifestFile)}, "not a run"},
		{"failed step as a run", []string{good, failedStep}, "the step failed"},
		{"nothing in common", []string{sweepDir, otherSweep}, "nothing to compare"},
		{"bad max-regression", []string{good, good, "--max-regression", "ten"}, "--max-regression"},
		{"negative max-regression", []string{good, good, "--max-regression", "-5%"}, "negative"},
		{"zero noise", []string{good, good, "--noise", "0"}, "--noise"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := compareCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, stderr, tc.msg)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, "loadgen: ") {
				t.Errorf("first line %q", first)
			}
		})
	}
}

// A step file compares like a run file.
func TestCompareStepFiles(t *testing.T) {
	a := cmpSweep(t, map[string][]float64{"x": {10}})
	b := cmpSweep(t, map[string][]float64{"x": {13}})
	f := func(d string) string { return filepath.Join(d, store.StepsDir, "x_c4t4_100B_closed_r1.json") }
	code, out, _ := compareCLI(t, f(a), f(b))
	found := false
	for _, l := range strings.Split(out, "\n") {
		found = found || strings.Join(strings.Fields(l), " ") == "p99 10ms 13ms 1.30 - REGRESSION (point)"
	}
	if code != exitBreached || !found {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// Directories of sweeps (loadgen lab's, one per protocol) compare sweep by
// sweep; a regression in one of them fails the comparison, named.
func TestCompareSweepDirectories(t *testing.T) {
	nest := func(sweeps map[string]string) string {
		dir := t.TempDir()
		for name, src := range sweeps {
			if err := os.Rename(src, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	a := nest(map[string]string{
		"tcp-rr":  cmpSweep(t, map[string][]float64{"pod-pod-vxlan": {10, 10.1, 10.2}}),
		"tcp-crr": cmpSweep(t, map[string][]float64{"pod-pod-vxlan": {20, 20.1, 20.2}}),
	})
	b := nest(map[string]string{
		"tcp-rr":  cmpSweep(t, map[string][]float64{"pod-pod-vxlan": {10.1, 10.2, 10}}),
		"tcp-crr": cmpSweep(t, map[string][]float64{"pod-pod-vxlan": {30, 30.1, 30.2}}),
	})
	code, out, stderr := compareCLI(t, a, b)
	if code != exitBreached || !strings.Contains(out, "== tcp-crr") || !strings.Contains(out, "== tcp-rr") {
		t.Fatalf("exit %d, want 99 with both sweeps compared\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "tcp-crr pod-pod-vxlan") || strings.Contains(stderr, "tcp-rr pod-pod-vxlan") {
		t.Errorf("the regression is not named by its sweep: %s", stderr)
	}
}

// onBusyMachine gives a run a machine whose 2 CPUs were busy for cores of
// them, the generator using 0.05 of them.
func onBusyMachine(r *results.Run, cores float64) *results.Run {
	r.Generator.CPUSeconds = 0.05 * r.Summary.Duration.D().Seconds()
	r.Machine = &results.MachineCost{CPUs: 2, BusyCores: cores, Utilization: cores / 2, Saturated: cores/2 >= results.SaturatedAbove}
	return r
}

// A busy machine never passes a regression: a run on a saturated machine
// whose p50 is ×4000 its quiet baseline's fails as one (99) whatever the
// flags; one within what the contention can explain (×1.3 where other work
// took 0.9 of the CPUs beyond the baseline's) is not decidable (98), and
// --allow-contended passes it (0). Through compare, run's --baseline check
// and a sweep's.
func TestCompareContended(t *testing.T) {
	dir := t.TempDir()
	a := cmpWriteRun(t, dir, "a.json", onBusyMachine(cmpRun(200, 2), 0.2))
	slow := onBusyMachine(cmpRun(82, 2*4000), 1.98) // p50 ×4000, −59% requests/s
	slowFile := cmpWriteRun(t, dir, "slow.json", slow)
	busy := onBusyMachine(cmpRun(150, 2.6), 1.98) // ×1.3, −25% requests/s: within the margin
	busyFile := cmpWriteRun(t, dir, "busy.json", busy)

	for _, flags := range [][]string{nil, {"--allow-contended"}} {
		code, out, stderr := compareCLI(t, append([]string{a, slowFile}, flags...)...)
		if code != exitBreached || !strings.Contains(out, "REGRESSION (M in B, past contention)") || !strings.Contains(stderr, "regressions beyond 10%") {
			t.Errorf("×4000 on a busy machine %v: exit %d, want 99\n%s%s", flags, code, out, stderr)
		}
	}
	code, out, stderr := compareCLI(t, a, busyFile)
	if code != exitUndecided || !strings.Contains(out, "contended (M in B)") || !strings.Contains(out, "not decidable") ||
		!strings.Contains(stderr, "not decidable") || strings.Contains(out, "regressions beyond") || strings.Contains(out, "past contention") {
		t.Errorf("within the margin: exit %d, want 98\n%s%s", code, out, stderr)
	}
	if code, out, stderr = compareCLI(t, a, busyFile, "--allow-contended"); code != exitOK {
		t.Errorf("within the margin, --allow-contended: exit %d, want 0\n%s%s", code, out, stderr)
	}
	if code, out, stderr = compareCLI(t, a, busyFile, "--judge-contended"); code != exitBreached || !strings.Contains(out, "judged though contended") {
		t.Errorf("within the margin, --judge-contended: exit %d, want 99\n%s%s", code, out, stderr)
	}

	// run --baseline: the check the run's figures go through.
	junit := filepath.Join(dir, "junit.xml")
	for _, tc := range []struct {
		run  *results.Run
		args []string
		code compare.Exit
		want string
	}{
		{slow, nil, compare.Breached, "REGRESSION (M in B, past contention)"},
		{slow, []string{"--allow-contended", "--judge-contended"}, compare.Breached, "REGRESSION"},
		{busy, nil, compare.Undecided, "6 figures not decidable"},
		{busy, []string{"--allow-contended"}, compare.OK, "--allow-contended: they do not fail the check"},
	} {
		c, err := chkFlags(t, false, append([]string{"--baseline", a, "--junit", junit}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		code, err := c.checkRun(&out, tc.run, "")
		if err != nil || code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("run --baseline %v: %v, want %v with %q\n%s", tc.args, code, tc.code, tc.want, out.String())
		}
		if tc.run == busy {
			r := chkReadJUnit(t, junit)
			skipped := 0
			for _, cs := range r.Suites[0].Cases {
				if cs.Skipped != nil && strings.Contains(cs.Skipped.Message, "not decidable") {
					skipped++
				}
			}
			if r.Failures != 0 || skipped != 6 {
				t.Errorf("junit: %d cases not decidable, want 6: %+v", skipped, r)
			}
		}
	}

	// A sweep's --baseline: the same, step by step.
	base := cmpSweep(t, map[string][]float64{"nginx": {20, 20.2, 20.4}})
	b := cmpSweep(t, map[string][]float64{"nginx": {26, 26.2, 26.5}})
	for _, d := range []string{base, b} {
		files, _ := filepath.Glob(filepath.Join(d, store.StepsDir, "*.json"))
		for _, f := range files {
			st, err := store.ReadStep(f)
			if err != nil {
				t.Fatal(err)
			}
			onBusyMachine(st.Run, map[string]float64{base: 0.2, b: 1.98}[d])
			if err := store.WriteJSON(f, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, steps, err := store.ReadSweep(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code compare.Exit
	}{{nil, compare.Undecided}, {[]string{"--allow-contended"}, compare.OK}, {[]string{"--judge-contended"}, compare.Breached}} {
		c, err := chkFlags(t, true, append([]string{"--baseline", base}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if code, err := c.checkSteps(&out, steps); err != nil || code != tc.code {
			t.Errorf("sweep --baseline %v: %v, want %v\n%s", tc.args, code, tc.code, out.String())
		}
	}
}

// Real sweeps against httpbin, three repeats of one open-loop step each
// (a few seconds of load in all): the same sweep run twice regresses in
// nothing, and a real slowdown of one side (/delay/8ms for /delay/2ms)
// is found as a regression by the whole interval of B/A. On a machine as
// busy as a CI runner's the steps are contended (M): a change within what
// that contention explains is then not decidable (98), never a pass.
func TestCompareRealSweeps(t *testing.T) {
	url := startHTTPBin(t)
	sweep := func(endpoint string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "s")
		code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c2t1", "--payloads", "100", "-R", "200",
			"-d", "250ms", "--repeats", "3", "--endpoint", endpoint, "-q", "-o", dir)
		if code != exitOK {
			t.Fatalf("sweep %s: exit %d\n%s%s", endpoint, code, out, stderr)
		}
		return dir
	}
	a, again, slow := sweep("/delay/2ms"), sweep("/delay/2ms"), sweep("/delay/8ms")
	// verdicts are the verdict column's by metric: the table's columns
	// are apart by two spaces or more, its cells by one at most.
	verdicts := func(out string) map[string]string {
		v := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1); len(f) >= 6 {
				v[f[len(f)-6]] = f[len(f)-1]
			}
		}
		return v
	}

	code, out, stderr := compareCLI(t, a, again)
	if code != exitOK && (code != exitUndecided || !strings.Contains(out, "contended (")) || strings.Contains(out, "REGRESSION") || !strings.Contains(out, "intervals: 90% confidence") {
		t.Fatalf("the same sweep twice: exit %d\n%s%s", code, out, stderr)
	}
	_, out, stderr = compareCLI(t, a, again, "--judge-contended")
	v := verdicts(out)
	for _, m := range []string{"rps", "errors", "p50"} {
		if v[m] != "holds" && v[m] != "within noise" && v[m] != "worse" && v[m] != "better" {
			t.Errorf("the same sweep twice, judged: %s %q\n%s%s", m, v[m], out, stderr)
		}
	}

	code, out, stderr = compareCLI(t, a, slow)
	v = verdicts(out)
	if contended := strings.HasPrefix(v["p50"], "contended ("); contended && code != exitUndecided || !contended && (code != exitBreached || !strings.HasPrefix(v["p50"], "REGRESSION")) {
		t.Errorf("the slowdown: exit %d, p50 %q\n%s%s", code, v["p50"], out, stderr)
	}
	code, out, stderr = compareCLI(t, a, slow, "--judge-contended")
	if v := verdicts(out); code != exitBreached || !strings.HasPrefix(v["p50"], "REGRESSION") || !strings.Contains(stderr, "baseline c2t1 100B 200/s p50") {
		t.Errorf("the slowdown, judged: exit %d, p50 %q\n%s%s", code, v["p50"], out, stderr)
	}
}
