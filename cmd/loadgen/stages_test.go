package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"loadgen/results/store"
)

// A run on three stages lasts as long as they do, sends each at its rate
// (a pacer at half the rate would miss every tolerance here by 30 points or more),
// and reports each stage apart, in the JSON and the summary.
func TestStagesRun(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := cli(t, "run", "-c", "4", "-t", "2", "-R", "0-1k/2s,1k/2s,1k-200/2s", "--json", out, url)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := run.Config.Duration.D(); d != 6*time.Second {
		t.Errorf("duration %v, want the stages' 6s", d)
	}
	if run.Config.Schedule != "0-1000/2s,1000/2s,1000-200/2s" {
		t.Errorf("schedule %q", run.Config.Schedule)
	}
	st := run.Summary.Stages
	if len(st) != 3 {
		t.Fatalf("%d stages reported, want 3: %+v", len(st), st)
	}
	// Each stage's own mean rate, over the whole intervals that are its
	// figures (an interval reaches up to a tenth of a second past a
	// stage's edge): 500, 1000 and 600/s.
	var total int64
	for i, want := range []float64{500, 1000, 600} {
		s := st[i]
		if math.Abs(s.Asked/want-1) > 0.2 {
			t.Errorf("stage %d (%s): asked %.1f/s, want about %.0f/s", i+1, s.Stage, s.Asked, want)
		}
		if math.Abs(s.Achieved/s.Asked-1) > 0.2 {
			t.Errorf("stage %d (%s): achieved %.1f/s for %.1f/s asked, want within 20%%", i+1, s.Stage, s.Achieved, s.Asked)
		}
		if l := s.Latency; l.Count == 0 || l.P50 <= 0 || l.P95 < l.P50 || l.P99 < l.P95 {
			t.Errorf("stage %d latency %+v", i+1, l)
		}
		if s.Duration.D() < time.Second || s.Duration.D() > 3*time.Second {
			t.Errorf("stage %d measured over %v, want about 2s", i+1, s.Duration.D())
		}
		total += s.Requests
	}
	if total != run.Summary.Requests {
		t.Errorf("the stages count %d requests, the run %d", total, run.Summary.Requests)
	}
	// Each stage is a row of the summary: its spec, when, its rates, p50,
	// p95, p99.
	for _, spec := range []string{"0-1000/2s", "1000/2s", "1000-200/2s"} {
		row := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(spec) + `\s+\d+\.\ds\s+\d+\.\d\s+\d+\.\d\s+\S+\s+\S+\s+\S+\s+0$`)
		if !row.MatchString(stdout) {
			t.Errorf("no row for stage %s in the summary:\n%s", spec, stdout)
		}
	}
}

// What the stages and -d or --warmup cannot both mean is refused, exit 2.
func TestStagesBadInput(t *testing.T) {
	url := "http://127.0.0.1:1/" // never reached
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-R", "1k/2s,2k/2s", "-d", "10s"}, "-d 10s: the stages last 4s"},
		{[]string{"-R", "1k/2s,2k/2s", "-d", "1s"}, "-d 1s: the stages last 4s"},
		{[]string{"-R", "1k/2s", "--warmup", "2s"}, "--warmup 2s: the stages last 2s"},
		{[]string{"-R", "1k/2s,,2k/1s"}, "stage 2"},
		{[]string{"-R", "0/2s"}, "want at least one"},
		{[]string{"-R", "1k/0s"}, "must be positive"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := cli(t, append(append([]string{"run"}, tc.args...), url)...)
			first := strings.SplitN(stderr, "\n", 2)[0]
			if code != exitUsage || !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, tc.msg) {
				t.Errorf("exit %d, %q: want 2 and %q", code, first, tc.msg)
			}
		})
	}
}

// -R @FILE's errors are usage errors (pace.ReadStages reads the file).
func TestStagesFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nothing\n"), 0o644)
	for _, tc := range []struct{ arg, msg string }{{"@" + empty, "no stages"}, {"@" + filepath.Join(dir, "missing"), "no such file"}} {
		code, _, stderr := cli(t, "run", "-R", tc.arg, "http://127.0.0.1:1/")
		if first := strings.SplitN(stderr, "\n", 2)[0]; code != exitUsage || !strings.Contains(first, tc.msg) {
			t.Errorf("-R %s: exit %d, %q; want 2 and %q", tc.arg, code, first, tc.msg)
		}
	}
}

// A closed loop on a connection schedule sends on as many connections as
// each stage counts: three connections answer about three times what one
// does (all three from the start would make it one time), each stage
// reported apart.
func TestConnScheduleRun(t *testing.T) {
	url := startHTTPBin(t) + "/delay/0.02"
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := cli(t, "run", "-c", "1/1s,3/1s", "--json", out, url)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	c := run.Config
	if c.ConnectionSchedule != "1/1s,3/1s" || c.Connections != 3 || c.Duration.D() != 2*time.Second || c.Driver != "goroutines" || c.OpenLoop() {
		t.Errorf("config %+v", c)
	}
	st := run.Summary.Stages
	if len(st) != 2 {
		t.Fatalf("%d stages: %+v", len(st), st)
	}
	// Each stage's connections, by Little's law: a closed loop's rate
	// times its mean latency is the requests in flight, whatever a busy
	// machine does to the latency (a ratio of the two stages' rates is
	// not: a stall in one stage moves it).
	for i, want := range []float64{1, 3} {
		if n := st[i].Achieved * st[i].Latency.Mean.D().Seconds(); n < 0.75*want || n > 1.1*want {
			t.Errorf("stage %d answered %.1f/s at a mean %v: %.2f requests in flight, want about %v (its connections)",
				i+1, st[i].Achieved, st[i].Latency.Mean, n, want)
		}
	}
	for i, s := range st {
		if s.Asked != 0 || s.Latency.Count == 0 || s.Latency.P50.D() < 20*time.Millisecond {
			t.Errorf("stage %d: %+v", i+1, s)
		}
	}
	if !regexp.MustCompile(`(?m)^  3/1s\s+\d+\.\ds\s+-\s+\d+\.\d`).MatchString(stdout) {
		t.Errorf("no row for stage 3/1s:\n%s", stdout)
	}
}

// What a connection schedule cannot be is refused, exit 2.
func TestConnScheduleBadInput(t *testing.T) {
	url := "http://127.0.0.1:1/" // never reached
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-c", "1-4/1s", "-R", "100"}, "not with -R"},
		{[]string{"-c", "1-4/1s", "--driver", "loop"}, "runs on goroutines"},
		{[]string{"-c", "1.5/1s"}, "whole numbers"},
		{[]string{"-c", "1/1s", "-d", "5s"}, "the stages last 1s"},
		{[]string{"-c", "ramp:1-4/1s"}, "-c"},
		{[]string{"-c", "0/1s"}, "at least one"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := cli(t, append(append([]string{"run"}, tc.args...), url)...)
			first := strings.SplitN(stderr, "\n", 2)[0]
			if code != exitUsage || !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, tc.msg) {
				t.Errorf("exit %d, %q: want 2 and %q", code, first, tc.msg)
			}
		})
	}
}
