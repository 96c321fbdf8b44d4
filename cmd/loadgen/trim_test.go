package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

// TestSweepTrim checks that the watched processes are sampled over the
// measured window less --trim-start at its start and --trim-end at its end
// (by default min(1 s, a quarter) at its end only), as recorded with each
// step; a trim that leaves nothing is a usage error.
func TestSweepTrim(t *testing.T) {
	url := startHTTPBin(t)
	watch := "baseline=pid:" + strconv.Itoa(os.Getpid()) // the test process serves the target
	const d = 1200 * time.Millisecond
	for _, tc := range []struct {
		name     string
		args     []string
		from, to time.Duration // the cost window within the measured one
	}{
		{"default", nil, 0, d - 300*time.Millisecond},
		{"trimmed", []string{"--trim-start", "400ms", "--trim-end", "500ms"}, 400 * time.Millisecond, d - 500*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			args := append([]string{"sweep", "--path", "baseline=" + url, "--watch", watch, "--ladder", "c1t1", "--payloads", "100",
				"-d", d.String(), "-o", dir, "-q"}, tc.args...)
			if code, out, stderr := cli(t, args...); code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "baseline_c1t1_100B_closed_r1.json"))
			if err != nil || st.Run == nil || len(st.Watched) != 1 {
				t.Fatalf("step: %v %+v", err, st)
			}
			w, start := st.Watched[0], st.Run.Start
			if w.CoveredFrom == nil || w.CoveredTo == nil {
				t.Fatalf("the step does not record the span its cost covers: %+v", w)
			}
			if from := w.CoveredFrom.Sub(start); from < tc.from || from > tc.from+250*time.Millisecond {
				t.Errorf("sampling began %s into the measured window, want %s", from, tc.from)
			}
			if to := w.CoveredTo.Sub(start); to < tc.to || to > d {
				t.Errorf("sampling ended %s into the measured window, want %s (before its end, %s)", to, tc.to, d)
			}
		})
	}
	code, _, stderr := cli(t, "sweep", "--path", "baseline="+url, "-d", "5s", "--trim-start", "4s", "--trim-end", "1s", "--dry-run")
	if code != exitUsage || !strings.Contains(stderr, "leaves nothing of each step's 5s") {
		t.Errorf("a trim of the whole window: exit %d: %s", code, stderr)
	}
	// k8s run reads the same file, but its cost comes over its metrics
	// source's spans: it refuses the keys rather than ignore them.
	file := writeFile(t, "k.yaml", "paths:\n  - name: baseline\n    url: "+url+"\nduration: 100s\ntrim_start: 62s\nladder: c1t1\npayloads: [100]\n")
	if code, _, stderr := cli(t, "k8s", "run", "-f", file, "--dry-run"); code != exitUsage || !strings.Contains(stderr, "trim_start and trim_end are the local sweep's") {
		t.Errorf("k8s run with trim_start: exit %d: %s", code, stderr)
	}
}
