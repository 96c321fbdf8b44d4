package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/lab"
	"loadgen/meshes/nginxingress"
	"loadgen/results"
	"loadgen/results/store"
)

// TestMain lets a test run this binary as the loadgen command, so a test
// can kill a real sweep process.
// It first removes the namespaces of runs whose process is gone (a test
// run killed midway leaves its sweeps' sidecar pods).
func TestMain(m *testing.M) {
	if os.Getenv("LOADGEN_TEST_AS_CLI") == "1" {
		main()
	}
	if os.Geteuid() == 0 {
		if removed, _ := lab.CleanupStaleTests(); len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "removed %d namespaces of killed runs: %v\n", len(removed), removed)
		}
	}
	os.Exit(m.Run())
}

func sweepArgs(url, dir string) []string {
	return []string{"sweep", "--path", "baseline=" + url, "--ladder", "c1t1..c4t4", "--payloads", "100,1KiB",
		"-d", "300ms", "-o", dir, "-q"}
}

func stepFiles(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	entries, _ := os.ReadDir(filepath.Join(dir, sweep.StepsDir))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			info, err := e.Info()
			if err == nil {
				out[strings.TrimSuffix(e.Name(), ".json")] = info.ModTime()
			}
		}
	}
	return out
}

func planIDs(t *testing.T, dir string) []string {
	t.Helper()
	var m results.Manifest
	b, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonUnmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Steps
}

// A sweep killed mid-way resumes: the steps it finished are kept as they
// were, the rest run, and the results cover the whole plan.
func TestSweepResumeAfterKill(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "sweep")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, sweepArgs(url, dir)...)
	cmd.Env = append(os.Environ(), "LOADGEN_TEST_AS_CLI=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for len(stepFiles(t, dir)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := stepFiles(t, dir)
	plan := planIDs(t, dir)
	if len(before) < 2 || len(before) >= len(plan) {
		t.Fatalf("killed with %d of %d steps done; want some but not all", len(before), len(plan))
	}

	code, out, stderr := cli(t, append(sweepArgs(url, dir), "--resume")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	after := stepFiles(t, dir)
	var got []string
	for id := range after {
		got = append(got, id)
	}
	sort.Strings(got)
	want := append([]string(nil), plan...)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after resume the steps are\n%v\nwant the plan\n%v", got, want)
	}
	for id, mt := range before {
		if !after[id].Equal(mt) {
			t.Errorf("step %s finished before the kill was run again", id)
		}
	}
	for id := range after {
		st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, id+".json"))
		if err != nil || st.Run == nil || st.Run.Summary.Requests == 0 {
			t.Errorf("step %s: %v", id, err)
		}
	}
	if !strings.Contains(out, "c4t4") || !strings.Contains(out, "baseline") {
		t.Errorf("no table after resume:\n%s", out)
	}
}

// Ctrl-C stops the sweep after the current step and keeps every finished one.
func TestSweepInterruptKeepsFinishedSteps(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "sweep")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for len(stepFiles(t, dir)) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	var out, errb syncBuffer
	code := execute(ctx, sweepArgs(url, dir), &out, &errb)
	if code != 130 {
		t.Fatalf("exit %d, want 130; %s", code, errb.String())
	}
	files := stepFiles(t, dir)
	if len(files) < 2 {
		t.Fatalf("%d steps kept", len(files))
	}
	// The count is of the steps that finished: not the one Ctrl-C cut short.
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, st := range steps {
		if st.Run != nil && !st.Run.Interrupted {
			done++
		}
	}
	if want := fmt.Sprintf("results: %s (%d of 6 steps", dir, done); !strings.Contains(out.String(), want) {
		t.Errorf("no %q in\n%s", want, out.String())
	}
	if !strings.Contains(errb.String(), "--resume") {
		t.Errorf("no hint to resume: %s", errb.String())
	}
	// A second run without --resume refuses to overwrite.
	code, _, stderr := cli(t, sweepArgs(url, dir)...)
	if code != exitUsage || !strings.Contains(stderr, "--resume") {
		t.Errorf("rerun without --resume: exit %d, %s", code, stderr)
	}
}

func TestSweepBadInput(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("paths:\n  - name: a\n    url: "+url+"\nladder: c1t1..c3t128\npayloads: [100]\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"bad ladder in file", []string{"sweep", "-f", bad, "-o", filepath.Join(dir, "x")}, "line 4"},
		{"bad ladder flag", []string{"sweep", "--path", "a=" + url, "--ladder", "c1t1..c3t128"}, "ladder"},
		{"negative payload", []string{"sweep", "--path", "a=" + url, "--payloads", "100,-5"}, "-5"},
		{"path without url", []string{"sweep", "--path", "a="}, "url is missing"},
		{"watch of nothing", []string{"sweep", "--path", "a=" + url, "--watch", "a=name:no-such-process-xyz", "-o", filepath.Join(dir, "y")}, "no-such-process-xyz"},
		{"missing file", []string{"sweep", "-f", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"zero repeats", []string{"sweep", "--path", "a=" + url, "--repeats", "0", "-o", filepath.Join(dir, "z")}, "--repeats must be at least 1"},
		{"zero duration", []string{"sweep", "--path", "a=" + url, "-d", "0", "-o", filepath.Join(dir, "z")}, "--duration must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, stderr, tc.msg)
			}
		})
	}
}

// Flags override the keys of a sweep file, as size's and lab's do: the
// ladder, durations, a path's URL; a new --path adds one, --watch watches a
// path of the file.
func TestSweepFlagsOverrideFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	a, b, c := "http://"+testport.Closed(t), "http://"+testport.Closed(t), "http://"+testport.Closed(t)
	os.WriteFile(file, []byte("paths:\n  - name: baseline\n    url: "+a+"\n  - name: px\n    url: "+b+"\nladder: c1t1..c4t4\npayloads: [100, 1KiB]\nduration: 30s\n"), 0o644)
	code, out, stderr := cli(t, "sweep", "-f", file, "--ladder", "c2t2", "-d", "2s", "--path", "px="+c, "--path", "more="+a,
		"--watch", "baseline=pid:1", "-o", filepath.Join(dir, "o"), "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"baseline_c2t2_100B_closed_r1", "more_c2t2_1KiB_closed_r1", "6 steps", "about 14s"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("no %q in\n%s\n%s", want, out, stderr)
		}
	}
	if !regexp.MustCompile(`px_c2t2_1KiB_closed_r1\s+` + regexp.QuoteMeta(c)).MatchString(out) {
		t.Errorf("px does not go to the --path URL %s:\n%s", c, out)
	}
	if strings.Contains(out, "c1t1") || strings.Contains(out, b) {
		t.Errorf("the file's ladder or px's URL survived the flags:\n%s", out)
	}
	if code, _, stderr := cli(t, "sweep", "-f", file, "--watch", "nope=pid:1", "--dry-run"); code != exitUsage || !strings.Contains(stderr, "no path named nope") {
		t.Errorf("--watch of no path: exit %d, %s", code, stderr)
	}
}

// An unreachable path fails its own steps; the others still run, and the
// sweep exits 1 naming the failed step.
func TestSweepUnreachablePath(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--path", "dead=http://"+testport.Closed(t),
		"--ladder", "c1t1", "--payloads", "100", "-d", "200ms", "-o", dir, "-q")
	if code != exitFail || !strings.Contains(out, "sweep: 1 of 2 steps failed: dead_c1t1_100B_closed_r1") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if !strings.Contains(out, "failed: cannot connect") {
		t.Errorf("the dead path's step is not reported as failed:\n%s", out)
	}
	st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "baseline_c1t1_100B_closed_r1.json"))
	if err != nil || st.Run == nil || st.Run.Summary.Requests == 0 {
		t.Errorf("baseline step: %v %+v", err, st)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// A step that cannot be saved (a full disk, here a directory in the way of
// its file) is still printed: what was measured is never lost silently.
func TestSweepUnsavedStepIsPrinted(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	blocked := filepath.Join(dir, sweep.StepsDir, "baseline_c2t2_100B_closed_r1.json")
	if err := os.MkdirAll(filepath.Join(blocked, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c1t1..c4t4", "--payloads", "100", "-d", "200ms", "-o", dir, "-q")
	if code != 1 || !strings.Contains(stderr, "baseline_c2t2_100B_closed_r1") || !strings.Contains(stderr, "not saved") {
		t.Errorf("exit %d, stderr %q: want 1 naming the unsaved step", code, stderr)
	}
	for _, rung := range []string{"c1t1", "c2t2"} {
		if !regexp.MustCompile(`(?m)^\s*` + rung + `\s+baseline\s+[1-9]`).MatchString(out) {
			t.Errorf("no %s row in the table:\n%s", rung, out)
		}
	}
	if st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "baseline_c1t1_100B_closed_r1.json")); err != nil || st.Run == nil {
		t.Errorf("the step before it is not saved: %v", err)
	}
}

// Sweeps of gRPC from flags: no HTTP endpoint is glued to the target, and
// --call sweeps any method.
func TestSweepGRPCFlags(t *testing.T) {
	g := startGRPCEcho(t)
	for _, args := range [][]string{
		{"--payloads", "100"},
		{"--call", "grpc.health.v1.Health/Check", "--data", "{}"},
	} {
		dir := filepath.Join(t.TempDir(), "s")
		all := append([]string{"sweep", "--path", "a=" + g.Addr(), "-p", "grpc", "--ladder", "c1t1", "-d", "200ms", "-o", dir, "-q"}, args...)
		if code, out, stderr := cli(t, all...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 1 || steps[0].Run == nil || steps[0].Run.Summary.Requests == 0 || steps[0].Run.Summary.Errors.Total() != 0 {
			t.Fatalf("%v: %v %+v", args, err, steps)
		}
		if call := steps[0].Run.Config.Call; (args[0] == "--call") != (call == "/grpc.health.v1.Health/Check") {
			t.Errorf("%v: call %q", args, call)
		}
	}
	if code, _, stderr := cli(t, "sweep", "--path", "a="+g.Addr(), "-p", "grpc", "--endpoint", "/x"); code != exitUsage || !strings.Contains(stderr, "endpoint") {
		t.Errorf("an HTTP endpoint on a grpc sweep: exit %d, %s", code, stderr)
	}
}

// --dry-run checks the sweep and prints its plan without sending load or
// writing results.
func TestSweepDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, stderr := cli(t, "sweep", "--path", "a=http://"+testport.Closed(t), "--path", "b=http://"+testport.Closed(t),
		"--ladder", "c1t1..c4t4", "--payloads", "100", "-o", dir, "--dry-run")
	if code != 0 || !strings.Contains(stderr, "dry run") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for i, id := range []string{"a_c1t1_100B_closed_r1", "b_c1t1_100B_closed_r1", "a_c2t2_100B_closed_r1", "b_c4t4_100B_closed_r1"} {
		if !strings.Contains(out, id) {
			t.Errorf("plan line %d: no %s in\n%s", i, id, out)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run wrote %s: %v", dir, err)
	}
	// With --find-max, the plan is the searches and the rules they follow.
	code, out, stderr = cli(t, "sweep", "--path", "a=http://"+testport.Closed(t), "--path", "b=http://"+testport.Closed(t), "--ladder", "c1t1", "--payloads", "100",
		"-d", "2s", "-R", "500", "-o", dir, "--dry-run", "--find-max", "--slo", "p99<1s")
	if code != 0 || !strings.Contains(stderr, "dry run") {
		t.Fatalf("--dry-run --find-max: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"find-max plan: 2 searches of the highest open-loop rate holding p99<1s", "a c1t1 100B", "a_c1t1_100B_r500_r1", "b_c1t1_100B_r500_r1",
		"climbs from 500/s", "a rate fails on 2 misses", "only a rate held in 2 of at most 3 probes is reported", "(G)", "(M)",
		"a probe runs 2s", "typically 15–35, about 30s–1m10s a search"} {
		if !strings.Contains(out, want) {
			t.Errorf("--dry-run --find-max: no %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run of --find-max wrote %s: %v", dir, err)
	}
	if code, _, stderr := cli(t, "sweep", "--path", "a=http://"+testport.Closed(t), "--dry-run", "--find-max"); code != exitUsage || !strings.Contains(stderr, "--slo") {
		t.Errorf("--dry-run --find-max without --slo: exit %d, %s", code, stderr)
	}
}

// --dry-run checks the proxy of every sidecar path and says which are
// not installed, with the paths (and steps) that would fail for it.
func TestSweepDryRunChecksProxies(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no envoy here, whatever this machine has
	code, out, stderr := cli(t, "sweep", "--dry-run", "--path", "baseline=sidecar:none", "--path", "e1=sidecar:envoy,mode=both",
		"--path", "e2=sidecar:envoy,mode=serveronly", "--path", "n=sidecar:nginx,mode=both", "--ladder", "c1t1,c2t2", "--payloads", "100")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	text := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(text, "not installed here: envoy") || !strings.Contains(text, "the 4 steps of e1, e2 would fail") {
		t.Errorf("the dry run does not say envoy is missing for e1 and e2:\n%s", out)
	}
	if _, err := nginxingress.Available(); err == nil && strings.Contains(text, "not installed here: nginx") {
		t.Errorf("nginx is installed but said missing:\n%s", out)
	}
	if long := longLines(out); len(long) > 0 {
		t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
}

// The sweep's header counts in the singular where there is one, and fits
// 100 columns.
func TestSweepHeaderPluralsAndWidth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-results-directory-", 3))
	code, out, stderr := cli(t, "sweep", "--path", "a=http://"+testport.Closed(t), "--ladder", "c1t1", "--payloads", "100", "-o", dir, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if text := strings.Join(strings.Fields(stderr), " "); !strings.Contains(text, "sweep: 1 step (1 path × 1 ladder step × 1 payload × 1 rate × 1 repeat)") {
		t.Errorf("header: %s", stderr)
	}
	if long := longLines(stderr + out); len(long) > 0 {
		t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
}
