package main

import (
	"path/filepath"
	"strings"
	"testing"

	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

// --arrival and --jitter refuse what they cannot do in one line, exit 2,
// before any load.
func TestArrivalBadInput(t *testing.T) {
	url := "http://127.0.0.1:1/" // never reached: the flags fail first
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--arrival", "gaussian", "-R", "100"}, `--arrival "gaussian": want uniform or poisson`},
		{[]string{"--arrival", "poisson"}, "--arrival paces an open loop: add -R"},
		{[]string{"--arrival", "uniform"}, "--arrival paces an open loop: add -R"},
		{[]string{"--jitter", "10%"}, "--jitter paces an open loop: add -R"},
		{[]string{"--jitter", "101%", "-R", "100"}, "--jitter: jitter \"101%\""},
		{[]string{"--jitter", "-5", "-R", "100"}, "--jitter"},
		{[]string{"--jitter", "ten", "-R", "100"}, "--jitter"},
		{[]string{"--arrival", "poisson", "--jitter", "10%", "-R", "100"}, "use one"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := cli(t, append(append([]string{"run", "-d", "1s"}, tc.args...), url)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if !strings.HasPrefix(lines[0], "loadgen: ") || !strings.Contains(lines[0], tc.msg) {
				t.Errorf("first line %q, want a 'loadgen: ' error mentioning %q", lines[0], tc.msg)
			}
			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("stack trace:\n%s", stderr)
			}
		})
	}
}

// A Poisson run says so in its JSON and its summary, and a jittered one
// its jitter; LOADGEN_ARRIVAL asks for it as the flag does.
func TestArrivalRun(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	for _, tc := range []struct {
		args       []string
		env        string
		arrival    string
		jitter     float64
		summaryHas string
	}{
		{[]string{"--arrival", "poisson"}, "", "poisson", 0, "poisson arrivals"},
		{nil, "poisson", "poisson", 0, "poisson arrivals"},
		{[]string{"--jitter", "20%"}, "", "uniform", 20, "uniform arrivals, jitter ±20%"},
	} {
		t.Run(strings.Join(tc.args, " ")+tc.env, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("LOADGEN_ARRIVAL", tc.env)
			}
			out := filepath.Join(t.TempDir(), "run.json")
			args := append([]string{"run", "-c", "2", "-t", "1", "-d", "500ms", "-R", "400", "--json", out}, tc.args...)
			code, stdout, stderr := cli(t, append(args, url)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			run, err := store.ReadRun(out)
			if err != nil {
				t.Fatal(err)
			}
			if c := run.Config; c.Arrival != tc.arrival || c.JitterPct != tc.jitter {
				t.Errorf("config arrival %q jitter %v%%, want %q %v%%", c.Arrival, c.JitterPct, tc.arrival, tc.jitter)
			}
			if !strings.Contains(stdout, tc.summaryHas) {
				t.Errorf("summary lacks %q:\n%s", tc.summaryHas, stdout)
			}
			// The schedule's requests, sent or not (a busy machine may
			// stall the 0.5 s run): about 200.
			if p := run.Summary.Pacing; p == nil || p.Sent == 0 || p.Sent+p.Unsent < 150 || p.Sent+p.Unsent > 250 {
				t.Errorf("pacing %+v, want about 200 due", p)
			}
		})
	}
}

// A sweep's open-loop steps run on the asked arrival process; a sweep with
// none refuses it.
func TestSweepArrival(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, _, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c1t1", "--payloads", "100",
		"-R", "0,200", "--arrival", "poisson", "-d", "300ms", "-o", dir, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for id, want := range map[string]string{"baseline_c1t1_100B_r200_r1": "poisson", "baseline_c1t1_100B_closed_r1": ""} {
		st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Run.Config.Arrival; got != want {
			t.Errorf("%s: arrival %q, want %q", id, got, want)
		}
	}
	code, _, stderr = cli(t, "sweep", "--path", "baseline="+url, "--arrival", "poisson", "--dry-run")
	if first := strings.SplitN(stderr, "\n", 2)[0]; code != exitUsage || !strings.Contains(first, "add -R") {
		t.Errorf("exit %d, %q: want 2 and add -R", code, first)
	}
}
