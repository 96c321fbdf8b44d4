package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"loadgen/loadgen"
	"loadgen/results"
	"loadgen/results/report"
	"loadgen/results/store"
)

// schema compiles docs/schema/NAME.schema.json, the result format's JSON
// Schema.
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "docs", "schema", name+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := jsonschema.NewCompiler().Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// checkSchema validates the file at path against docs/schema's NAME.
func checkSchema(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema(t, name).Validate(inst); err != nil {
		t.Errorf("%s does not match docs/schema/%s.schema.json:\n%v", path, name, err)
	}
}

// jqNumber reads a number at a dotted path of a JSON file, as jq's
// .summary.latency.p99_us does.
func jqNumber(t *testing.T, path, at string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(strings.TrimPrefix(at, "."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s: not an object at %q", path, at, k)
		}
		v = m[k]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%s: %s is %T %v, not a number", path, at, v, v)
	}
	return f
}

// What loadgen run --json writes matches docs/schema/run.schema.json, its
// times are numbers a script compares as they are, and the summary says
// when the machine was saturated exactly when the JSON does.
func TestRunJSONSchema(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "500ms", "--warmup", "100ms", "-R", "400", "--json", out, url)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkSchema(t, "run", out)
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	p99 := jqNumber(t, out, ".summary.latency.p99_us")
	if want, _ := strconv.ParseFloat(results.FormatMicros(run.Summary.Latency.P99), 64); p99 != want || p99 <= 0 {
		t.Errorf(".summary.latency.p99_us %v, want %v", p99, want)
	}
	// p95, as vegeta, ghz, oha and k6 print it: between p90 and p99.
	p95, p90 := jqNumber(t, out, ".summary.latency.p95_us"), jqNumber(t, out, ".summary.latency.p90_us")
	if want, _ := strconv.ParseFloat(results.FormatMicros(run.Summary.Latency.P95), 64); p95 != want || p95 < p90 || p95 > p99 || p95 <= 0 {
		t.Errorf(".summary.latency.p95_us %v, want %v, between p90 %v and p99 %v", p95, want, p90, p99)
	}
	if jqNumber(t, out, ".schema") != 4 {
		t.Errorf(".schema is not 4")
	}
	if d, timeout := jqNumber(t, out, ".config.duration_s"), jqNumber(t, out, ".config.timeout_us"); d != 0.5 || timeout != 2e6 {
		t.Errorf(".config.duration_s %v, .config.timeout_us %v", d, timeout)
	}
	if w := jqNumber(t, out, ".summary.duration_s"); w < 0.4 || w > 1 {
		t.Errorf(".summary.duration_s %v", w)
	}
	jqNumber(t, out, ".summary.pacing.max_lag_us")
	if run.Config.Driver == loadgen.DriverLoop {
		if s := jqNumber(t, out, ".summary.pacing.slack_us"); s != float64(loadgen.DefaultSlack/time.Microsecond) {
			t.Errorf(".summary.pacing.slack_us %v, want the default %v", s, loadgen.DefaultSlack)
		}
	}
	jqNumber(t, out, ".generator.cpu_s")
	if jq, err := exec.LookPath("jq"); err == nil { // as a script would ask
		got, err := exec.Command(jq, "-e", ".summary.latency.p99_us < .config.timeout_us and .summary.latency.p99_us > 0", out).CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != "true" {
			t.Errorf("jq: %s %v", got, err)
		}
	}
	said := strings.Contains(strings.Join(strings.Fields(stdout), " "), "WARNING: "+report.FlagMeaning("M")) // wrapped at 100 columns
	if saturated := run.Machine != nil && run.Machine.Saturated; said != saturated {
		t.Errorf("machine saturated %v, but the summary says so: %v\n%s", saturated, said, stdout)
	}
}

// A sweep's manifest and steps match docs/schema.
func TestSweepJSONSchema(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, _, stderr := cli(t, "sweep", "--path", "baseline="+url, "--watch", "baseline=pid:"+strconv.Itoa(os.Getpid()),
		"--ladder", "c1t1", "--payloads", "100", "-d", "300ms", "-o", dir, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkSchema(t, "manifest", filepath.Join(dir, store.ManifestFile))
	steps, _ := filepath.Glob(filepath.Join(dir, store.StepsDir, "*.json"))
	if len(steps) != 1 {
		t.Fatalf("steps %v", steps)
	}
	checkSchema(t, "step", steps[0])
	jqNumber(t, steps[0], ".run.summary.latency.p50_us")
	st, err := store.ReadStep(steps[0])
	if err != nil || len(st.Watched) != 1 {
		t.Fatalf("step: %+v, %v", st, err)
	}
	jqNumber(t, steps[0], ".run.config.duration_s")
}

// Results of schema 2 (written by loadgen before schema 3, in
// results/store/testdata/schema2) still report, compare and merge; the
// merge is written in the current format.
func TestOldResultsStillRead(t *testing.T) {
	old := filepath.Join("..", "..", "results", "store", "testdata", "schema2")
	open, w0, w1 := filepath.Join(old, "run-open.json"), filepath.Join(old, "w0.json"), filepath.Join(old, "w1.json")
	if b, _ := os.ReadFile(open); !bytes.Contains(b, []byte(`"schema": 2`)) || !bytes.Contains(b, []byte(`"p99": "401.919µs"`)) {
		t.Fatalf("%s is no longer the schema-2 file it was", open)
	}
	// Its figures as they were written, and the p95 of schema 4 from its
	// histogram; it ran on a saturated machine (M).
	code, out, stderr := cli(t, "report", open)
	if code != exitOK || !strings.Contains(out, "| 2000 | 2000 | 65.5us | 95.2us | 103us | 402us | 2.78ms | 3.43ms | 3.43ms | 0 | 0 | 0.07 | M |") {
		t.Errorf("report of a schema-2 run: exit %d %s\n%s", code, stderr, out)
	}
	code, out, stderr = cli(t, "compare", w0, w1)
	if code == exitUsage || !strings.Contains(out, "p99") {
		t.Errorf("compare of schema-2 runs: exit %d %s\n%s", code, stderr, out)
	}
	merged := filepath.Join(t.TempDir(), "all.json")
	if code, out, stderr := cli(t, "merge", w0, w1, "-o", merged); code != exitOK || !strings.Contains(out, "1000 requests") {
		t.Fatalf("merge of schema-2 runs: exit %d %s\n%s", code, stderr, out)
	}
	checkSchema(t, "run", merged)
	if n := jqNumber(t, merged, ".schema"); n != results.SchemaVersion {
		t.Errorf("merged schema %v", n)
	}
	if p99 := jqNumber(t, merged, ".summary.latency.p99_us"); p99 < 1000 || p99 > 1e6 {
		t.Errorf("merged p99_us %v", p99)
	}
}
