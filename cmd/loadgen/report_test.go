package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results/store"
)

// reportCLI runs `loadgen report …` in-process and returns the exit status
// and output, whether or not newRoot registers the command yet.
func reportCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	if c, _, err := root.Find([]string{"report"}); err != nil || c == root {
		root.AddCommand(newReportCmd())
	} else {
		return cli(t, append([]string{"report"}, args...)...)
	}
	root.SetArgs(append([]string{"report"}, args...))
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return exitOK, out.String(), errb.String()
	}
	fmt.Fprintf(&errb, "loadgen: %v\n", err)
	var rf runFailure
	if errors.As(err, &rf) {
		return exitFail, out.String(), errb.String()
	}
	return exitUsage, out.String(), errb.String()
}

// fixture is the committed sweep of the report package's tests: a real
// demo run (baseline and nginx, 4 ladder steps, 100 B and 1 KiB).
const fixture = "../../results/report/testdata/sweep"

func TestReportSweepOutputs(t *testing.T) {
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := reportCLI(t, fixture, "--html", out("r.html"), "--csv", out("s.csv"), "--markdown", out("r.md"),
		"--json-fortio", out("f.json"), "--json-smp", out("smp.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout should be empty when files are asked:\n%s", stdout)
	}
	html, _ := os.ReadFile(out("r.html"))
	for _, want := range []string{"<svg class=\"chart\"", "baseline vs nginx", "Environment and versions"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, bad := range []string{"http://cdn", "https://", "<link ", "src=\"http"} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("HTML references the network: %q", bad)
		}
	}
	f, _ := os.Open(out("s.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 17 {
		t.Errorf("CSV: %d rows, %v; want a header and 16 steps", len(rows), err)
	}
	var fortio []map[string]any
	if b, _ := os.ReadFile(out("f.json")); json.Unmarshal(b, &fortio) != nil || len(fortio) != 16 || fortio[0]["RunType"] != "HTTP" {
		t.Errorf("fortio JSON: %d results", len(fortio))
	}
	var smp []map[string]any
	if b, _ := os.ReadFile(out("smp.json")); json.Unmarshal(b, &smp) != nil || len(smp) != 16 || smp[0]["latencies_ms"] == nil {
		t.Errorf("SMP JSON: %d results", len(smp))
	}
	md, _ := os.ReadFile(out("r.md"))
	if !bytes.Contains(md, []byte("| c64t64 | nginx |")) {
		t.Errorf("Markdown lacks the table:\n%s", md)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 {
		t.Errorf("%d files in the output directory, want 5 (no temporary files left)", len(entries))
	}
}

func TestReportDefaultsToMarkdown(t *testing.T) {
	code, stdout, stderr := reportCLI(t, fixture)
	if code != 0 || !strings.Contains(stdout, "### payload 1 KiB") || !strings.Contains(stdout, "| c1t1 | baseline |") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	// The manifest names the sweep too.
	code, stdout2, _ := reportCLI(t, filepath.Join(fixture, store.ManifestFile))
	if code != 0 || stdout2 != stdout {
		t.Errorf("report of manifest.json differs from the report of its directory (exit %d)", code)
	}
}

func TestReportSingleRun(t *testing.T) {
	step := filepath.Join(fixture, store.StepsDir, "nginx_c4t4_100B_closed_r1.json")
	st, err := store.ReadStep(step)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "nginx.json")
	if err := store.WriteRun(run, st.Run); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{run, step} {
		code, stdout, stderr := reportCLI(t, path)
		if code != 0 || !strings.Contains(stdout, "| requests | req/s |") || !strings.Contains(stdout, "| 45244 | 15079 |") {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", path, code, stderr, stdout)
		}
		code, stdout, _ = reportCLI(t, path, "--percentiles")
		if code != 0 || !strings.HasPrefix(stdout, "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n") ||
			!strings.Contains(stdout, "#[Max     =       28.656, Total count    =        45244]") {
			t.Errorf("%s --percentiles: exit %d:\n%.400s", path, code, stdout)
		}
	}
	html := filepath.Join(t.TempDir(), "run.html")
	if code, _, stderr := reportCLI(t, run, "--html", html); code != 0 {
		t.Fatalf("--html: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("Latency by percentile")) {
		t.Error("the single-run HTML lacks its percentile chart")
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(fixture, store.StepsDir, "baseline_c1t1_100B_closed_r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var step map[string]json.RawMessage
	json.Unmarshal(good, &step)
	runJSON := []byte(step["run"])
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	emptyDir := filepath.Join(dir, "empty")
	os.Mkdir(emptyDir, 0o755)
	for _, tc := range []struct {
		name string
		args []string
		msg  string // in stderr, besides the file's name
		file string
	}{
		{"no path", nil, "needs a PATH", ""},
		{"missing", []string{filepath.Join(dir, "nope.json")}, "no such file", filepath.Join(dir, "nope.json")},
		{"truncated", []string{write("trunc.json", runJSON[:len(runJSON)/2])}, "not a loadgen result", filepath.Join(dir, "trunc.json")},
		{"newer schema", []string{write("new.json", bytes.Replace(runJSON, []byte(`"schema": 1`), []byte(`"schema": 7`), 1))}, "newer than this loadgen", filepath.Join(dir, "new.json")},
		{"not ours", []string{write("other.json", []byte(`{"RunType":"HTTP","ActualQPS":3}`))}, "not a loadgen result", filepath.Join(dir, "other.json")},
		{"empty loadgen doc", []string{write("bare.json", []byte(`{"schema":1,"tool":"loadgen"}`))}, "not a loadgen run", filepath.Join(dir, "bare.json")},
		{"not a sweep dir", []string{emptyDir}, "not a sweep's results directory", emptyDir},
		{"unknown flag", []string{fixture, "--pdf", "x"}, "unknown flag", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := reportCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.msg) || !strings.Contains(stderr, tc.file) {
				t.Errorf("exit %d, stderr %q: want exit 2 saying %q about %s", code, stderr, tc.msg, tc.file)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

// An output that cannot be written is a usage error (exit 2), as run's,
// found before any input is read.
func TestReportWriteFailure(t *testing.T) {
	for _, flag := range []string{"--csv", "--html"} {
		code, _, stderr := reportCLI(t, fixture, flag, "/nonexistent-dir/s.out")
		if code != exitUsage || !strings.Contains(stderr, flag+": cannot write /nonexistent-dir/s.out") {
			t.Errorf("exit %d, stderr %q: want exit 2 naming %s", code, stderr, flag)
		}
	}
}

// The Markdown sweep tables hold the columns a reader needs first; --wide
// adds the others.
func TestReportWide(t *testing.T) {
	head := func(args ...string) string {
		code, stdout, stderr := reportCLI(t, append([]string{fixture}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, "| step |") {
				return l
			}
		}
		t.Fatalf("no sweep table:\n%s", stdout)
		return ""
	}
	if h := head(); h != "| step | path | req/s | p50 | p99 | errors | +p99 | cpu/1k |" {
		t.Errorf("default columns %q", h)
	}
	if h := head("--wide"); !strings.Contains(h, "| p90 |") || !strings.Contains(h, "| +cpu/1k | +MiB | proxy cpu |") || !strings.Contains(h, "| gen cpu |") {
		t.Errorf("--wide columns %q", h)
	}
}
