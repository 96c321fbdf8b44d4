package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"loadgen/internal/testport"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// checkFor parses command-line flags into checkFlags, as run (or sweep)
// would, and calls parse.
func chkFlags(t *testing.T, sweep bool, args ...string) (*checkFlags, error) {
	t.Helper()
	c := &checkFlags{}
	fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
	if sweep {
		c.registerSweep(fl)
	} else {
		c.register(fl)
	}
	if err := fl.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c, c.parse()
}

type chkJUnit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func chkReadJUnit(t *testing.T, path string) chkJUnit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r chkJUnit
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s is not valid XML: %v\n%s", path, err, b)
	}
	return r
}

func TestCheckFlagsParseErrors(t *testing.T) {
	dir := t.TempDir()
	runFile := cmpWriteRun(t, dir, "base.json", cmpRun(1000, 10))
	sweepDir := cmpSweep(t, map[string][]float64{"a": {1}})
	for _, tc := range []struct {
		name  string
		sweep bool
		args  []string
		msg   string
	}{
		{"bad operator", false, []string{"--assert", "p99<20ms", "--assert", "p99<<3"}, `--assert: assertion "p99<<3": operator "<<"`},
		{"unknown metric", false, []string{"--assert", "p100<1ms"}, `unknown metric "p100"`}, {"unknown metric", false, []string{"--assert", "latency<1ms"}, `unknown metric "latency"`},
		{"a watched process in a run", false, []string{"--assert", "cpu.nginx<1"}, "loadgen run watches none"},
		{"not a number", false, []string{"--assert", "errors<abc"}, `value "abc" is not a number`},
		{"no unit", false, []string{"--assert", "p99<20"}, "add a time unit"},
		{"max-regression alone", false, []string{"--max-regression", "5%"}, "--max-regression needs --baseline"},
		{"judge-contended alone", true, []string{"--judge-contended"}, "--judge-contended needs --baseline"},
		{"bad max-regression", false, []string{"--baseline", runFile, "--max-regression", "x"}, "--max-regression"},
		{"missing baseline", false, []string{"--baseline", filepath.Join(dir, "nope.json")}, "nope.json does not exist"},
		{"run with a sweep baseline", false, []string{"--baseline", sweepDir}, "a run compares with a run file"},
		{"sweep with a run baseline", true, []string{"--baseline", runFile}, "a sweep compares with a sweep's results directory"},
		{"junit in a missing directory", false, []string{"--junit", filepath.Join(dir, "no", "junit.xml")}, "--junit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chkFlags(t, tc.sweep, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line saying %q", err, tc.msg)
			}
		})
	}
}

func TestCheckRunNothingAsked(t *testing.T) {
	c, err := chkFlags(t, false)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := breached(c.checkRun(&out, cmpRun(1000, 10), ""))
	if failed || err != nil || out.Len() != 0 {
		t.Errorf("failed %v err %v output %q", failed, err, out.String())
	}
}

func TestCheckRun(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	run := cmpRun(1000, 23.4)
	c, err := chkFlags(t, false, "--assert", "p99<20ms", "--assert", "p99 < 30 ms", "--assert", "errors<0.1%",
		"--assert", "rps>=1000", "--junit", junit)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := breached(c.checkRun(&out, run, ""))
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	for _, want := range []string{
		"assert p99<20ms:    23.4ms FAILED (not < 20ms)",
		"assert p99<30ms:    23.4ms ok",
		"assert errors<0.1%: 0%     ok",
		"assert rps>=1000:   1000   ok",
		"assertions: 1 of 4 failed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	r := chkReadJUnit(t, junit)
	if r.Tests != 5 || r.Failures != 1 || r.Errors != 0 || len(r.Suites) != 1 {
		t.Fatalf("junit: %+v", r)
	}
	s := r.Suites[0]
	if s.Name != "loadgen run http://127.0.0.1:8080/get" || s.Cases[0].Name != "run" || s.Cases[0].Failure != nil ||
		s.Cases[1].Class != "http://127.0.0.1:8080/get" ||
		s.Cases[1].Name != "p99<20ms" || s.Cases[1].Failure == nil || s.Cases[1].Failure.Message != "p99 23.4ms is not < 20ms" {
		t.Errorf("junit suite: %+v", s)
	}
	// The run itself failed (its verdict): its case fails, whatever the
	// assertions say.
	if _, err := c.checkRun(&out, cmpRun(1000, 5), "no request succeeded: 10 of 10 failed (status 10)"); err != nil {
		t.Fatal(err)
	}
	if r := chkReadJUnit(t, junit); r.Suites[0].Cases[0].Name != "run" || r.Suites[0].Cases[0].Failure == nil ||
		!strings.Contains(r.Suites[0].Cases[0].Failure.Message, "no request succeeded") {
		t.Errorf("a failed run's case: %+v", r.Suites[0].Cases[0])
	}

	// All holding: not failed. Several in one flag, split by commas.
	c, _ = chkFlags(t, false, "--assert", "p99<30ms,timeouts<=0")
	out.Reset()
	if failed, err := breached(c.checkRun(&out, run, "")); failed || err != nil || !strings.Contains(out.String(), "assertions: all 2 held") {
		t.Errorf("failed %v err %v\n%s", failed, err, out.String())
	}
}

func TestCheckRunBaseline(t *testing.T) {
	dir := t.TempDir()
	base := cmpWriteRun(t, dir, "last.json", cmpRun(10000, 20))
	junit := filepath.Join(dir, "junit.xml")
	for _, tc := range []struct {
		name   string
		run    *results.Run
		args   []string
		failed bool
		out    string
	}{
		{"planted 30% regression", cmpRun(7000, 26), nil, true, "REGRESSION"},
		{"noise", cmpRun(9800, 20.5), nil, false, "no regression beyond 10%"},
		{"within a wider limit", cmpRun(7000, 26), []string{"--max-regression", "40%"}, false, "no regression beyond 40%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := chkFlags(t, false, append([]string{"--baseline", base, "--junit", junit}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			failed, err := breached(c.checkRun(&out, tc.run, ""))
			if err != nil || failed != tc.failed || !strings.Contains(out.String(), tc.out) {
				t.Errorf("failed %v (want %v), err %v; output lacks %q?\n%s", failed, tc.failed, err, tc.out, out.String())
			}
			if !strings.Contains(out.String(), "A: "+base) {
				t.Errorf("the baseline is not named:\n%s", out.String())
			}
			r := chkReadJUnit(t, junit)
			if r.Tests != 8 || (r.Failures > 0) != tc.failed { // run, rps, errors, p50, p90, p95, p99, p99.9
				t.Errorf("junit %+v", r)
			}
			if c := r.Suites[0].Cases[6]; c.Name != "p99 vs baseline" || (c.Failure != nil) != tc.failed {
				t.Errorf("junit case %+v", c)
			}
		})
	}
}

func chkSweepSteps() []*results.Step {
	ok := func(path string, p99 float64) *results.Step {
		st := &results.Step{Schema: 1, Tool: "loadgen", ID: path + "_c4t4_100B_closed_r1", Path: path, Rung: "c4t4", Payload: 100, Repeat: 1,
			Run: cmpRun(1000, p99)}
		if path == "nginx" {
			st.Watched = []results.ProcessCost{{Name: "nginx", Role: "proxy", Samples: 10, CPUMean: 1.5, MemMax: 30 << 20}}
		}
		return st
	}
	dead := &results.Step{Schema: 1, Tool: "loadgen", ID: "dead_c4t4_100B_closed_r1", Path: "dead", Rung: "c4t4", Payload: 100,
		Repeat: 1, Failed: "cannot connect to 127.0.0.1:1"}
	return []*results.Step{ok("baseline", 5), ok("nginx", 12), dead}
}

func TestCheckSteps(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	c, err := chkFlags(t, true, "--assert", "p99<10ms", "--assert", "mem.nginx<64MiB", "--junit", junit)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := breached(c.checkSteps(&out, chkSweepSteps()))
	if err != nil || !failed {
		t.Fatalf("failed %v err %v", failed, err)
	}
	for _, want := range []string{
		"assert baseline_c4t4_100B_closed_r1 p99<10ms:",
		"assert nginx_c4t4_100B_closed_r1 p99<10ms:",
		"12ms  FAILED (not < 10ms)",
		"30MiB ok",
		"FAILED (the step failed: cannot connect to 127.0.0.1:1)",
		"skipped (nginx is not watched on path baseline)",
		"assertions: 3 of 5 failed, 1 skipped",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	r := chkReadJUnit(t, junit)
	if r.Tests != 9 || r.Failures != 2 || r.Errors != 2 { // a run case per step: the dead one's fails
		t.Errorf("junit %+v", r)
	}
	classes := map[string]int{}
	for _, cs := range r.Suites[0].Cases {
		classes[cs.Class]++
	}
	if classes["nginx_c4t4_100B_closed_r1"] != 3 || classes["dead_c4t4_100B_closed_r1"] != 3 {
		t.Errorf("classnames %v", classes)
	}
	if c := r.Suites[0].Cases[6]; c.Name != "run" || c.Failure == nil || !strings.Contains(c.Failure.Message, "cannot connect") {
		t.Errorf("the dead step's run case: %+v", c)
	}
	if c := r.Suites[0].Cases[2]; c.Skipped == nil || c.Name != "mem.nginx<64MiB" {
		t.Errorf("the case of a process not watched on the step's path: %+v", c)
	}

	// A process watched nowhere is a mistake, not a skip.
	c, _ = chkFlags(t, true, "--assert", "cpu.envoy<1")
	out.Reset()
	if failed, _ := breached(c.checkSteps(&out, chkSweepSteps())); !failed || !strings.Contains(out.String(), `no process "envoy" was watched`) {
		t.Errorf("failed %v\n%s", failed, out.String())
	}
}

func TestCheckStepsBaseline(t *testing.T) {
	base := cmpSweep(t, map[string][]float64{"baseline": {5}, "nginx": {9}, "dead": {5}})
	c, err := chkFlags(t, true, "--baseline", base)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := breached(c.checkSteps(&out, chkSweepSteps()))
	if err != nil || !failed {
		t.Fatalf("failed %v err %v", failed, err)
	}
	for _, want := range []string{"this sweep", "nginx c4t4 100B", "1.33", "REGRESSION: failed in B"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "assertions:") {
		t.Errorf("assertion summary without assertions:\n%s", out.String())
	}
}

// Through the real command line, once run and sweep register the flags.
func TestRunAssertCLI(t *testing.T) {
	if code, _, stderr := cli(t, "run", "--assert", "p99<<3", "http://127.0.0.1:1/"); code != exitUsage || !strings.Contains(stderr, `"p99<<3"`) {
		t.Errorf("bad assertion: exit %d, %s", code, stderr)
	}
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	saved := filepath.Join(dir, "run.json")
	code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "300ms", "-q", "--json", saved,
		"--assert", "p99<10s", "--assert", "errors<=0", "--assert", "rps>1", "--junit", junit, url)
	if code != exitOK || !strings.Contains(out, "assertions: all 3 held") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	if r := chkReadJUnit(t, junit); r.Tests != 4 || r.Failures != 0 {
		t.Errorf("junit %+v", r)
	}
	// A target that answers nothing but errors: the run fails, and so does
	// its JUnit report, though the latency bound holds. A dead one: the
	// report is written all the same, with its run case failed.
	for _, tc := range []struct{ name, url string }{{"errors only", startHTTPBin(t) + "/status/500"}, {"dead", "http://" + testport.Closed(t) + "/get"}} {
		os.Remove(junit)
		code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "300ms", "-q", "--assert", "p99<10s", "--max-errors", "100%", "--junit", junit, tc.url)
		r := chkReadJUnit(t, junit)
		if code != exitFail || r.Failures != 1 || r.Suites[0].Cases[0].Name != "run" || r.Suites[0].Cases[0].Failure == nil {
			t.Errorf("%s: exit %d, junit %+v\n%s%s", tc.name, code, r, out, stderr)
		}
	}
	code, out, stderr = cli(t, "run", "-c", "2", "-t", "1", "-d", "300ms", "-q", "--assert", "p50<1ns", url)
	if code != exitBreached || !strings.Contains(out, "FAILED (not < 1ns)") {
		t.Errorf("failing assertion: exit %d\n%s%s", code, out, stderr)
	}
	// A baseline ten times faster than it really is: a regression, judged
	// on one run a side (a point verdict) even where the machine or the
	// generator was saturated, as a closed loop on a test machine is.
	base, err := store.ReadRun(saved)
	if err != nil {
		t.Fatal(err)
	}
	base.Summary.RPS *= 10
	base.Summary.Latency.P50 /= 10
	fast := cmpWriteRun(t, dir, "fast.json", base)
	code, out, stderr = cli(t, "run", "-c", "2", "-t", "1", "-d", "300ms", "-q", "--baseline", fast, "--judge-contended", url)
	if code != exitBreached || !strings.Contains(out, "REGRESSION (point)") {
		t.Errorf("baseline: exit %d\n%s%s", code, out, stderr)
	}
}

func TestSweepAssertCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	if code, _, stderr := cli(t, "sweep", "--path", "baseline=http://127.0.0.1:1", "--assert", "p99<<3", "-o", out, "-q"); code != exitUsage || !strings.Contains(stderr, `"p99<<3"`) {
		t.Errorf("bad assertion: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a bad assertion started the sweep")
	}
	url := startHTTPBin(t)
	junit := filepath.Join(dir, "junit.xml")
	args := []string{"sweep", "--path", "baseline=" + url, "--ladder", "c1t1", "--payloads", "100", "-d", "200ms", "-q",
		"--assert", "p99<10s", "--assert", "errors<=0", "--junit", junit, "-o", out}
	code, stdout, stderr := cli(t, args...)
	if code != exitOK || !strings.Contains(stdout, "assert baseline_c1t1_100B_closed_r1 p99<10s:") || !strings.Contains(stdout, "assertions: all 2 held") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	r := chkReadJUnit(t, junit)
	if r.Tests != 3 || r.Failures != 0 || r.Suites[0].Cases[0].Class != "baseline_c1t1_100B_closed_r1" {
		t.Errorf("junit %+v", r)
	}
	// The same sweep against itself as the baseline, with an impossible bound.
	// The regression limit (×1000) is far past any noise of a loaded machine:
	// this tests the wiring, not the timing.
	code, stdout, stderr = cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c1t1", "--payloads", "100", "-d", "200ms", "-q",
		"--assert", "p50<1ns", "--baseline", out, "--max-regression", "100000%", "-o", filepath.Join(dir, "again"))
	if code != exitBreached || !strings.Contains(stdout, "FAILED (not < 1ns)") || !strings.Contains(stdout, "no regression beyond 100000%") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// A baseline with no step in common with the sweep gates nothing: the
// check fails and says so, in the output and the JUnit report.
func TestCheckStepsBaselineNothingInCommon(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "junit.xml")
	base := cmpSweep(t, map[string][]float64{"other": {5}})
	c, err := chkFlags(t, true, "--baseline", base, "--junit", junit)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failed, err := breached(c.checkSteps(&out, chkSweepSteps()[:2]))
	if err != nil || !failed || !strings.Contains(out.String(), "nothing was compared with the baseline") {
		t.Fatalf("failed %v, err %v:\n%s", failed, err, out.String())
	}
	if r := chkReadJUnit(t, junit); r.Failures != 1 {
		t.Errorf("junit %+v", r)
	}
}

// A process no path watches, in --assert or --slo, is refused before any
// load: the sweep would run every step to fail them all.
func TestSweepAssertUnwatched(t *testing.T) {
	for _, args := range [][]string{
		{"--assert", "cpu.hbx<1"},
		{"--watch", "baseline=pid:1", "--assert", "mem.nginx<1GiB"},
		{"--find-max", "--slo", "p99<10ms,cpu.nginx<1"},
	} {
		out := filepath.Join(t.TempDir(), "s")
		code, _, stderr := cli(t, append([]string{"sweep", "--path", "baseline=http://" + testport.Closed(t), "--ladder", "c1t1", "--payloads", "100", "-d", "1s", "-q", "-o", out}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "watched") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the sweep started", args)
		}
	}
}

// breached tells whether a check's status is 99, the one a breached
// assertion or a regression gives.
func breached(code compare.Exit, err error) (bool, error) {
	return code == compare.Breached, err
}

// p95 and any percentile, in the summary (--percentiles) and --assert.
func TestRunPercentilesCLI(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	code, out, stderr := cli(t, "run", "-c", "1", "-t", "1", "-n", "300", "--percentiles", "50,95,99.5",
		"--assert", "p95<10s", "--assert", "p99.5<10s", url)
	if code != exitOK || !regexp.MustCompile(`\n  Latency: +p50 \S+  p95 \S+  p99\.5 \S+  max \S+\n`).MatchString(out) ||
		!strings.Contains(out, "assert p95<10s:") || !strings.Contains(out, "assert p99.5<10s:") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = cli(t, "run", "-c", "1", "-t", "1", "-n", "300", url)
	// (max goes on under the first figure when the line is past 100 columns)
	if code != exitOK || !regexp.MustCompile(`\n  Latency: +p50 \S+  p90 \S+  p95 \S+  p99 \S+  p99\.9 \S+  p99\.99 \S+(  |\n {25})max \S+\n`).MatchString(out) {
		t.Errorf("default percentiles: exit %d\n%s%s", code, out, stderr)
	}
	for _, bad := range []string{"50,100", "x", "50,,99"} {
		if code, _, stderr := cli(t, "run", "-n", "10", "--percentiles", bad, url); code != exitUsage || !strings.Contains(stderr, "--percentiles") {
			t.Errorf("--percentiles %q: exit %d, %s", bad, code, stderr)
		}
	}
}

// A step whose every answer was 404 fails its latency assertions, naming
// the status, as an unreachable one does; the sweep says which status.
func TestSweepAssertNothingSucceeded(t *testing.T) {
	url := startHTTPBin(t)
	code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--endpoint", "/status/404", "--ladder", "c1t1", "--payloads", "100",
		"-d", "300ms", "-q", "--assert", "p99<10s", "-o", filepath.Join(t.TempDir(), "s"))
	if code != exitFail || !regexp.MustCompile(`assert baseline_c1t1_100B_closed_r1 p99<10s: +FAILED \(no successful request \(404 × \d+\)\)`).MatchString(out) ||
		!regexp.MustCompile(`no request succeeded: (\d+) of (\d+) failed \(404 × \d+\)`).MatchString(out) {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
}
