package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/compare"
)

// A run that failed says so in its exit status, with one line saying why
// under wrk's summary.
func TestRunExitStatus(t *testing.T) {
	srv := startHTTPBinServer(t)
	base := "http://" + srv.Addr()
	for _, tc := range []struct {
		name string
		args []string
		code int
		why  string // in the last line of stderr
	}{
		{"answered", []string{"run", "-c", "2", "-d", "1s", base + "/get"}, exitOK, ""},
		{"every request timed out", []string{"run", "-c", "5", "-d", "1s", "--timeout", "100ms", base + "/delay/200ms"}, exitFail, "no request succeeded"},
		{"every answer an error status", []string{"run", "-c", "2", "-d", "1s", base + "/status/503"}, exitFail, "no request succeeded"},
		{"--max-errors 100% still fails a run where nothing succeeded", []string{"run", "-c", "2", "-d", "1s", "--max-errors", "100%", base + "/status/503"}, exitFail, "no request succeeded"},
		{"gRPC against an HTTP server", []string{"run", "-c", "2", "-d", "1s", "-p", "grpc", srv.Addr()}, exitFail, "no request succeeded"},
		{"bad --max-errors", []string{"run", "-d", "1s", "--max-errors", "lots", base + "/get"}, exitUsage, "--max-errors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			line := lines[len(lines)-1]
			if tc.code == exitUsage {
				line = lines[0] // then comes the pointer to --help
			}
			if tc.why != "" && !strings.Contains(line, tc.why) {
				t.Errorf("line %q, want one saying %q", line, tc.why)
			}
			if tc.code != exitUsage && !strings.Contains(out, "Requests/sec:") {
				t.Errorf("wrk's summary is missing:\n%s", out)
			}
		})
	}
}

// A target killed mid-run: the run exits 1 saying the target stopped
// answering, although most of its requests succeeded before.
func TestRunExitStatusTargetKilled(t *testing.T) {
	srv := startHTTPBinServer(t)
	url := "http://" + srv.Addr() + "/get"
	// Killed once it answered 1000 requests, not 500 ms after the test
	// starts: a busy machine's slow start could reach that time before the
	// run's preflight (a target that was never there), or a late timer
	// after the run.
	go func() {
		for end := time.Now().Add(10 * time.Second); srv.Served() < 1000 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		srv.Close()
	}()
	code, out, stderr := cli(t, "run", "-c", "2", "-d", "2500ms", url)
	if code != exitFail || !strings.Contains(stderr, "the target stopped answering") {
		t.Errorf("exit %d, stderr %q, want 1 and 'the target stopped answering'\n%s", code, stderr, out)
	}
}

// A sweep whose steps failed exits 1, its last line naming them.
func TestSweepExitStatus(t *testing.T) {
	code, out, stderr := cli(t, "sweep", "-q", "--path", "baseline=http://"+testport.Closed(t), "--ladder", "c1t1..c2t2",
		"--payloads", "100", "-d", "500ms", "-o", t.TempDir()+"/s")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "sweep: 2 of 2 steps failed: baseline_c1t1_100B_closed_r1, baseline_c2t2_100B_closed_r1") {
		t.Errorf("last line %q does not name the failed steps", last)
	}
}

// The exit statuses a CI job branches on, one per outcome: a run that
// failed (1) is told from a breached assertion (99), and a run that both
// failed and breached one says it failed.
func TestExitStatusTable(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"all good", []string{"run", "-c", "1", "-t", "1", "-n", "50", "--assert", "p99<10s", url + "/get"}, exitOK},
		{"an assertion breached", []string{"run", "-c", "1", "-t", "1", "-n", "50", "--assert", "p50<1ns", url + "/get"}, exitBreached},
		{"the run failed", []string{"run", "-c", "1", "-t", "1", "-n", "50", "http://" + testport.Closed(t) + "/get"}, exitFail},
		{"failed and breached: failed", []string{"run", "-c", "1", "-t", "1", "-n", "50", "--assert", "p50<1ns", url + "/status/503"}, exitFail},
		{"usage", []string{"run", "--assert", "p50<", url + "/get"}, exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
		})
	}
	// compare: a regression is 99 too.
	base := cmpWriteRun(t, dir, "a.json", cmpRun(10000, 20))
	slow := cmpWriteRun(t, dir, "b.json", cmpRun(5000, 40))
	if code, out, stderr := compareCLI(t, base, slow); code != exitBreached {
		t.Errorf("compare with a regression: exit %d, want 99\n%s%s", code, out, stderr)
	}
}

// Worst picks the status to exit with when several hold.
func TestExitWorst(t *testing.T) {
	for _, tc := range []struct {
		codes []compare.Exit
		want  compare.Exit
	}{
		{nil, compare.OK},
		{[]compare.Exit{compare.OK, compare.Undecided}, compare.Undecided},
		{[]compare.Exit{compare.Undecided, compare.Breached}, compare.Breached},
		{[]compare.Exit{compare.Breached, compare.Aborted}, compare.Aborted},
		{[]compare.Exit{compare.Aborted, compare.Failed, compare.Breached}, compare.Failed},
		{[]compare.Exit{compare.Interrupted, compare.Breached}, compare.Interrupted},
	} {
		if got := compare.Worst(tc.codes...); got != tc.want {
			t.Errorf("Worst(%v) = %v, want %v", tc.codes, got, tc.want)
		}
	}
	seen := map[int]bool{}
	for _, c := range []int{exitOK, exitFail, exitUsage, exitUndecided, exitBreached, exitAborted, exitInterrupted, exitTerminated} {
		if seen[c] {
			t.Errorf("exit status %d means two things", c)
		}
		seen[c] = true
	}
}

// TestPathsExit: k8s paths ends with paths.Exit's status of its rows
// (meshes/k8s/paths tests the rule itself): 99 for a row below its
// tolerance, 1 for a failed measurement, after the table; a failed run
// is 1 and Ctrl-C 130, whatever the rows say.
func TestPathsExit(t *testing.T) {
	ratio := 0.5
	row := func(v string) paths.Row {
		return paths.Row{Path: "pod-pod-other-node", Test: "tcp-stream", Verdict: v, Ratio: &ratio, RatioMin: &ratio, RatioMax: &ratio}
	}
	live := context.Background()
	stopped, cancel := context.WithCancel(live)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		rows []paths.Row
		err  error
		want int
	}{
		{"within tolerance", live, []paths.Row{row(paths.VerdictBaseline), row(paths.VerdictOK)}, nil, exitOK},
		{"below tolerance", live, []paths.Row{row(paths.VerdictBaseline), row(paths.VerdictBelow)}, nil, exitBreached},
		{"a measurement failed", live, []paths.Row{row(paths.VerdictBelow), row(paths.VerdictFailed)}, nil, exitFail},
		{"the run failed", live, []paths.Row{row(paths.VerdictOK)}, errors.New("lost the API server"), exitFail},
		{"interrupted", stopped, []paths.Row{row(paths.VerdictBelow)}, context.Canceled, exitInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &k8sPathsFlags{out: "results/paths"}
			var out, stderr bytes.Buffer
			code := statusOf(f.finish(tc.ctx, &out, &stderr, &paths.Table{Rows: tc.rows}, tc.err))
			if code != tc.want || !strings.Contains(out.String(), "results: results/paths (") {
				t.Errorf("exit %d, want %d, after the table\n%s%s", code, tc.want, out.String(), stderr.String())
			}
		})
	}
}
