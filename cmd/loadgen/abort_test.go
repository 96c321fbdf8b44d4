package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/results/store"
)

// switchTarget answers 200 at once until `after` past its first request,
// then as turn says: a 500, or an answer 60 ms late.
func switchTarget(t *testing.T, after time.Duration, turn string) string {
	t.Helper()
	var first atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		if time.Duration(now-first.Load()) > after {
			switch turn {
			case "fail":
				w.WriteHeader(http.StatusInternalServerError)
				return
			case "slow":
				time.Sleep(60 * time.Millisecond)
			}
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// --abort-on-fail: a target that starts failing (or slows down) at second
// 3 stops a 20 s run within 2 s of it: exit 108, the reason printed, the
// result written (JSON marked aborted, the histogram log, a JUnit report
// whose run case fails with the reason).
func TestRunAbortOnFail(t *testing.T) {
	for _, tc := range []struct {
		turn, assert, broke string
		load                []string
	}{
		{"fail", "errors<1%", "errors<1% broke (errors ", []string{"-c", "2"}},
		// Open loop: in a closed loop the slow answers are few against
		// the fast ones before them, and the window's p99 sees them late.
		{"slow", "p99<20ms", "p99<20ms broke (p99 ", []string{"-c", "4", "-R", "200"}},
	} {
		t.Run(tc.turn, func(t *testing.T) {
			url := switchTarget(t, 3*time.Second, tc.turn)
			dir := t.TempDir()
			js, hlog, junit := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog"), filepath.Join(dir, "junit.xml")
			t0 := time.Now()
			args := append([]string{"run", "-t", "1", "-d", "20s", "-q", "--assert", tc.assert, "--abort-on-fail",
				"--json", js, "--hlog", hlog, "--junit", junit}, tc.load...)
			code, out, stderr := cli(t, append(args, url)...)
			took := time.Since(t0)
			if code != exitAborted || !strings.Contains(stderr, "loadgen: aborted at ") || !strings.Contains(stderr, tc.broke) {
				t.Fatalf("exit %d after %v\n%s%s", code, took, out, stderr)
			}
			run, err := store.ReadRun(js)
			if err != nil {
				t.Fatal(err)
			}
			if !run.Interrupted || !strings.Contains(run.Aborted, tc.broke) {
				t.Errorf("the result: interrupted %v, aborted %q", run.Interrupted, run.Aborted)
			}
			// The breach begins at 3 s of the target's time, which is the
			// run's give or take its connects.
			if d := run.Summary.Duration.D(); d < 3*time.Second || d > 5*time.Second {
				t.Errorf("stopped after %v of measuring (the command took %v): want within 2 s of the breach at 3 s", d, took)
			}
			if len(run.Timeline) < 3 || run.Summary.Requests == 0 {
				t.Errorf("the result lacks what was measured: %d intervals, %d requests", len(run.Timeline), run.Summary.Requests)
			}
			if fi, err := os.Stat(hlog); err != nil || fi.Size() == 0 {
				t.Errorf("--hlog: %v", err)
			}
			r := chkReadJUnit(t, junit)
			if c := r.Suites[0].Cases[0]; c.Name != "run" || c.Failure == nil || !strings.Contains(c.Failure.Message, "aborted at") {
				t.Errorf("junit's run case: %+v", c)
			}
			if !strings.Contains(out, "Aborted at ") {
				t.Errorf("the summary does not say the run was aborted:\n%s", out)
			}
		})
	}
}

// A run whose assertions hold runs to its end.
func TestRunAbortOnFailHolds(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	js := filepath.Join(t.TempDir(), "run.json")
	code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "4s", "-q", "--assert", "errors<1%,p99<5s", "--abort-on-fail", "--json", js, url)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	run, err := store.ReadRun(js)
	if err != nil {
		t.Fatal(err)
	}
	if run.Interrupted || run.Aborted != "" || run.Summary.Duration.D() < 4*time.Second {
		t.Errorf("interrupted %v, aborted %q, measured %v", run.Interrupted, run.Aborted, run.Summary.Duration.D())
	}
}

func TestAbortFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--abort-on-fail"}, "--abort-on-fail needs --assert"},
		{[]string{"run", "--abort-after", "5s"}, "--abort-after goes with --abort-on-fail"},
		{[]string{"run", "--abort-on-fail", "--assert", "cpu<1"}, "none of the assertions (cpu<1) can be judged while the load runs"},
		{[]string{"sweep", "--path", "baseline=http://127.0.0.1:1", "--keep-going"}, "--keep-going goes with --abort-on-fail"},
		{[]string{"sweep", "--path", "baseline=http://127.0.0.1:1", "--abort-on-fail", "--assert", "p99<1s", "--find-max", "--slo", "p99<1s"}, "--abort-on-fail and --find-max"},
	} {
		args := append(tc.args, "http://127.0.0.1:1/")
		if tc.args[0] == "sweep" {
			args = append(tc.args, "-o", filepath.Join(t.TempDir(), "s"))
		}
		code, _, stderr := cli(t, args...)
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s", tc.args, code, stderr)
		}
	}
}

// A sweep stops at the step that aborted: its result is saved, marked, and
// counts as failed; --keep-going runs the rest.
func TestSweepAbortOnFail(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"sweep", "--path", "baseline=" + url, "--endpoint", "/status/500", "--ladder", "c1t1,c2t2", "--payloads", "100",
			"-d", "10s", "-q", "--assert", "errors<1%", "--abort-on-fail", "-o", out}, more...)
	}
	out := filepath.Join(dir, "stop")
	code, stdout, stderr := cli(t, args(out)...)
	if code != exitAborted || !strings.Contains(stderr, "sweep: step baseline_c1t1_100B_closed_r1 aborted at ") ||
		!strings.Contains(stderr, "the sweep stopped there") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	st, err := store.ReadStep(filepath.Join(out, "steps", "baseline_c1t1_100B_closed_r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Run == nil || !strings.HasPrefix(st.Run.Aborted, "aborted at ") || st.Failure() != st.Run.Aborted {
		t.Errorf("the step: %+v", st)
	}
	if d := st.Run.Summary.Duration.D(); d > 5*time.Second {
		t.Errorf("the step ran %v of its 10 s", d)
	}
	if _, err := os.Stat(filepath.Join(out, "steps", "baseline_c2t2_100B_closed_r1.json")); err == nil {
		t.Error("the step after the aborted one ran")
	}
	out = filepath.Join(dir, "keep")
	code, stdout, stderr = cli(t, args(out, "--keep-going")...)
	if code != exitAborted || strings.Contains(stderr, "the sweep stopped there") {
		t.Errorf("--keep-going: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, id := range []string{"baseline_c1t1_100B_closed_r1", "baseline_c2t2_100B_closed_r1"} {
		if st, err := store.ReadStep(filepath.Join(out, "steps", id+".json")); err != nil || st.Run == nil || st.Run.Aborted == "" {
			t.Errorf("--keep-going: step %s: %v", id, err)
		}
	}
}
