package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
	"loadgen/results/store"
)

// mergeRun is one generator's run of a 10 s closed loop, started at
// offset from a fixed instant on host.
func mergeRun(t *testing.T, host string, offset time.Duration, requests int64) *results.Run {
	t.Helper()
	h := hist.New()
	h.RecordN(time.Millisecond, requests)
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(offset)
	return &results.Run{Schema: results.SchemaVersion, Tool: "loadgen",
		Config: results.Config{Target: "http://127.0.0.1:8080/get", Protocol: "http1", Connections: 2, Threads: 1,
			Duration: results.Duration(10 * time.Second), Timeout: results.Duration(time.Second)},
		Env:   results.Env{Hostname: host},
		Start: start, End: start.Add(10 * time.Second),
		Summary: results.Summary{Requests: requests, Duration: results.Duration(10 * time.Second), RPS: float64(requests) / 10,
			Status: map[int]int64{200: requests}, Latency: results.Reduce(h)},
		Histograms: results.Encoded{Latency: enc, Succeeded: enc},
	}
}

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	if err := store.WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
	return path
}

// A sweep's step files merge as the runs they hold, into a run that
// loadgen report reads.
func TestMergeStepFiles(t *testing.T) {
	dir := t.TempDir()
	var steps []string
	for i, host := range []string{"a", "b"} {
		st := results.Step{Schema: results.SchemaVersion, Tool: "loadgen", ID: "p_c2t1_100B_closed_r1", Rung: "c2t1",
			Connections: 2, Threads: 1, Run: mergeRun(t, host, time.Duration(i)*time.Millisecond, 1000)}
		steps = append(steps, writeJSON(t, filepath.Join(dir, host+".json"), st))
	}
	all := filepath.Join(dir, "all.json")
	code, out, errOut := cli(t, "merge", steps[0], steps[1], "-o", all)
	if code != exitOK || !strings.Contains(out, "2000 requests") {
		t.Fatalf("merge of two steps: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "report", all); code != exitOK || !strings.Contains(out, "2000") {
		t.Errorf("report of the merge: exit %d\n%s%s", code, out, errOut)
	}
	failed := writeJSON(t, filepath.Join(dir, "failed.json"), results.Step{Schema: results.SchemaVersion, Tool: "loadgen",
		Rung: "c2t1", Failed: "connection refused"})
	if code, _, errOut := cli(t, "merge", steps[0], failed, "-o", all); code != exitUsage || !strings.Contains(errOut, failed+": the step failed") {
		t.Errorf("a failed step: exit %d %s", code, errOut)
	}
}

// Runs that are not one load, measured together, each once, are refused
// (exit status 1) with a message naming the inputs and what differs.
func TestMergeRefusals(t *testing.T) {
	dir := t.TempDir()
	w0 := writeJSON(t, filepath.Join(dir, "w0.json"), mergeRun(t, "a", 0, 1000))
	w1 := writeJSON(t, filepath.Join(dir, "w1.json"), mergeRun(t, "b", 2*time.Millisecond, 1200))
	open := mergeRun(t, "b", 0, 1000)
	open.Config.Rate = 1000
	later := mergeRun(t, "b", 17*time.Second, 1000)
	b, _ := os.ReadFile(w0)
	copied := filepath.Join(dir, "copy.json")
	if err := os.WriteFile(copied, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		other string
		msg   []string
	}{
		{"open loop beside closed", writeJSON(t, filepath.Join(dir, "open.json"), open), []string{"closed loop", "open loop (-R 1000)", "open.json"}},
		{"windows apart", writeJSON(t, filepath.Join(dir, "later.json"), later), []string{"not measured at the same time", "ended 7s before", "later.json"}},
		{"a copy of w0", copied, []string{"same run", "copy.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, "merge", w0, tc.other, "-o", filepath.Join(dir, "x.json"))
			if code != exitFail {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			for _, m := range append(tc.msg, "w0.json") {
				if !strings.Contains(errOut, m) {
					t.Errorf("stderr %q does not say %q", errOut, m)
				}
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr is more than one line: %q", errOut)
			}
		})
	}
	// Workers a few ms apart, each its share: merged.
	all := filepath.Join(dir, "all.json")
	if code, out, errOut := cli(t, "merge", w0, w1, "-o", all); code != exitOK || !strings.Contains(out, "2200 requests") {
		t.Errorf("two workers: exit %d\n%s%s", code, out, errOut)
	}
	r, err := store.ReadRun(all)
	if err != nil || r.Summary.Duration.D() != 10*time.Second || r.End.Sub(r.Start) != 10*time.Second+2*time.Millisecond || r.Summary.RPS != 220 {
		t.Errorf("merged %v/s over %v, from %v to %v (%v): want 220/s, each worker's 10 s within 10.002 s", r.Summary.RPS, r.Summary.Duration, r.Start, r.End, err)
	}
}

// Workers whose windows overlap by a few ms are refused (exit 1), with a
// message saying by how much and about --allow-skew; with it, they merge
// at the sum of their rates, and the output and the merged run's notes
// say the windows were skewed.
func TestMergeSkew(t *testing.T) {
	dir := t.TempDir()
	w0 := writeJSON(t, filepath.Join(dir, "w0.json"), mergeRun(t, "a", 0, 1000))
	w1 := writeJSON(t, filepath.Join(dir, "w1.json"), mergeRun(t, "b", 10*time.Second-4*time.Millisecond, 3000))
	all := filepath.Join(dir, "all.json")
	code, out, errOut := cli(t, "merge", w0, w1, "-o", all)
	if code != exitFail || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, want 1 and one line\n%s%s", code, out, errOut)
	}
	for _, m := range []string{"w0.json", "w1.json", "4ms of the shortest window's 10s (0.0%)", "90%", "--allow-skew"} {
		if !strings.Contains(errOut, m) {
			t.Errorf("stderr %q does not say %q", errOut, m)
		}
	}
	if _, err := os.Stat(all); err == nil {
		t.Error("a refused merge wrote its output")
	}
	code, out, errOut = cli(t, "merge", "--allow-skew", w0, w1, "-o", all)
	if code != exitOK || !strings.Contains(out, "4000 requests, 400.0 req/s") || !strings.Contains(out, "warning: the measured windows were skewed") ||
		!strings.Contains(out, "4ms of the shortest window's 10s") {
		t.Fatalf("--allow-skew: exit %d, want 4000 requests at 400/s (100 + 300) and a warning\n%s%s", code, out, errOut)
	}
	r, err := store.ReadRun(all)
	if err != nil || r.Summary.RPS != 400 || !strings.Contains(strings.Join(r.Notes, "\n"), "skewed") {
		t.Errorf("merged %v/s, notes %q (%v): want 400/s and the skew noted", r.Summary.RPS, r.Notes, err)
	}
}

// Input that cannot be read is bad input, exit status 2, as report and
// compare have it: one line naming the file, then the pointer to --help.
func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeJSON(t, filepath.Join(dir, "good.json"), mergeRun(t, "a", 0, 1000))
	b, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"missing", []string{good, filepath.Join(dir, "nope.json")}, filepath.Join(dir, "nope.json") + " does not exist"},
		{"corrupt", []string{good, write("corrupt.json", []byte("{\"schema\":2,\x00"))}, "corrupt.json: not a loadgen result"},
		{"truncated", []string{good, write("trunc.json", b[:len(b)/2])}, "trunc.json: not a loadgen result"},
		{"newer schema", []string{good, write("newer.json", bytes.Replace(b, fmt.Appendf(nil, `"schema": %d`, results.SchemaVersion), []byte(`"schema": 7`), 1))}, "newer.json: result schema 7 is newer"},
		{"a directory", []string{good, sub}, sub + " is a directory"},
		{"an hlog", []string{good, write("w.hlog", []byte("#[StartTime: 1700000000.000 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"))}, "w.hlog: not a loadgen result"},
		{"a manifest", []string{good, write("manifest.json", []byte(`{"schema":2,"tool":"loadgen","kind":"sweep","steps":[]}`))}, "a sweep's manifest"},
		{"a bare header", []string{good, write("bare.json", []byte(`{"schema":2,"tool":"loadgen"}`))}, "bare.json: not a loadgen run"},
		{"the same path twice", []string{good, good}, "are the same file"},
		{"the same path spelt twice", []string{good, dir + "/./good.json"}, "are the same file"},
		{"a link to it", []string{good, link}, "are the same file"},
		{"-o in a missing directory", []string{good, "-o", filepath.Join(dir, "nodir", "all.json")}, "-o: cannot write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"merge"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "-o") {
				args = append(args, "-o", filepath.Join(dir, "all.json"))
			}
			code, out, errOut := cli(t, args...)
			if code != exitUsage || !strings.Contains(errOut, tc.msg) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errOut, tc.msg)
			}
			if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "loadgen: ") {
				t.Errorf("first line %q", first)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "all.json")); err == nil {
				t.Error("bad input wrote a merged run")
			}
		})
	}
}

// merge prints microseconds as the rest of loadgen's text does ("us", as
// wrk), and the merged run of two workers on machines of the same name
// says that name once.
func TestMergeUnitsAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	var in []string
	for i := range 2 {
		run := mergeRun(t, "vm", time.Duration(i)*time.Millisecond, 1000)
		h := hist.New()
		h.RecordN(250*time.Microsecond, 1000)
		enc, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		run.Summary.Latency, run.Histograms = results.Reduce(h), results.Encoded{Latency: enc, Succeeded: enc}
		run.Env.NumCPU, run.Env.OS = 2, "linux"
		in = append(in, writeJSON(t, filepath.Join(dir, fmt.Sprintf("w%d.json", i)), run))
	}
	all := filepath.Join(dir, "all.json")
	code, out, errOut := cli(t, "merge", in[0], in[1], "-o", all)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "µs") || !strings.Contains(out, "p50 250us") {
		t.Errorf("merge's latencies are not in us:\n%s", out)
	}
	code, out, errOut = cli(t, "report", all)
	if code != exitOK || !strings.Contains(out, "Environment: vm, 2 CPUs") {
		t.Errorf("report of the merge: exit %d: want Environment: vm, 2 CPUs…\n%s%s", code, out, errOut)
	}
}
