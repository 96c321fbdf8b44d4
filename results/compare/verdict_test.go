package compare

import (
	"errors"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// A run fails when no request succeeded, when it stopped answering, or
// when more requests failed than the budget allows.
func TestRunVerdict(t *testing.T) {
	run := func(ok, timeouts, status int64) *results.Run {
		r := &results.Run{}
		r.Summary.Requests = ok + status
		r.Summary.Errors.Timeout, r.Summary.Errors.Status = timeouts, status
		r.Summary.Duration = results.Duration(10 * time.Second)
		r.Summary.LastOK = results.Duration(10 * time.Second)
		return r
	}
	mustBudget := func(s string) ErrorBudget {
		b, err := ParseErrorBudget(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		run    *results.Run
		budget string
		fails  bool
	}{
		{"5% errors under the default", run(950, 50, 0), DefaultErrorBudget, false},
		{"15% errors over the default", run(850, 100, 50), DefaultErrorBudget, true},
		{"a count: 150 over 100", run(850, 150, 0), "100", true},
		{"a count: 50 under 100", run(950, 50, 0), "100", false},
		{"100% never fails for errors", run(100, 900, 0), "100%", false},
		{"nothing succeeded", run(0, 10, 0), "100%", true},
		{"nothing sent", run(0, 0, 0), DefaultErrorBudget, true},
	} {
		why := RunVerdict(tc.run, mustBudget(tc.budget))
		if (why != "") != tc.fails {
			t.Errorf("%s: verdict %q, want failed=%v", tc.name, why, tc.fails)
		}
	}
	stopped := run(500, 0, 0)
	stopped.Summary.Errors.Connect = 20
	stopped.Summary.LastOK = results.Duration(3 * time.Second)
	if why := RunVerdict(stopped, mustBudget(DefaultErrorBudget)); !strings.Contains(why, "stopped answering") {
		t.Errorf("answers ended 7 s before the end with connect errors after: verdict %q", why)
	}
	// Down 3 s in the middle: few errors (connects back off), still a failed run.
	out := run(5000, 0, 0)
	out.Summary.Errors.Connect = 90
	out.Summary.LastOK = out.Summary.Duration
	out.Summary.Outage, out.Summary.OutageAt = results.Duration(3*time.Second), results.Duration(2*time.Second)
	if why := RunVerdict(out, mustBudget(DefaultErrorBudget)); !strings.Contains(why, "stopped answering for 3s, from 2s to 5s") {
		t.Errorf("an outage of 3 s in 10: verdict %q", why)
	}
	out.Summary.Outage = results.Duration(900 * time.Millisecond)
	if why := RunVerdict(out, mustBudget(DefaultErrorBudget)); why != "" {
		t.Errorf("0.9 s without answers in 10 s: verdict %q", why)
	}
	// Answers that take 1.5 s each: 2 s with none is the load's pace.
	out.Summary.Outage = results.Duration(2 * time.Second)
	out.Summary.Succeeded = &results.Latency{P99: results.Duration(1500 * time.Millisecond)}
	if why := RunVerdict(out, mustBudget(DefaultErrorBudget)); why != "" {
		t.Errorf("2 s without answers where they take 1.5 s: verdict %q", why)
	}
	for _, bad := range []string{"", "-1%", "101%", "lots", "x%"} {
		if _, err := ParseErrorBudget(bad); err == nil {
			t.Errorf("--max-errors %q: no error", bad)
		}
	}
}

func TestParseErrorBudget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ErrorBudget
	}{
		{"10%", ErrorBudget{Share: 0.1, Count: -1}},
		{" 0% ", ErrorBudget{Share: 0, Count: -1}},
		{"100%", ErrorBudget{Share: 1, Count: -1}},
		{"100", ErrorBudget{Count: 100}},
		{"0", ErrorBudget{Count: 0}},
	} {
		if got, err := ParseErrorBudget(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseErrorBudget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"NaN%", "1e3%"} {
		if _, err := ParseErrorBudget(bad); err == nil || !strings.Contains(err.Error(), "want a share") {
			t.Errorf("ParseErrorBudget(%q) = %v, want an error asking for a share", bad, err)
		}
	}
}

// A sweep's failed steps are named, with the reason when the step has a
// run; they come to Failed, or Aborted when every one was aborted.
func TestFailedStepsAndExit(t *testing.T) {
	ok := &results.Step{ID: "ok", Run: &results.Run{Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	noRun := &results.Step{ID: "unreachable", Failed: "connection refused"}
	aborted := &results.Step{ID: "aborted", Run: &results.Run{Aborted: "p99<1ms broke", Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	silent := &results.Step{ID: "silent", Run: &results.Run{Summary: results.Summary{Duration: results.Duration(time.Second)}}}
	if ok.Failure() != "" || aborted.Failure() == "" || silent.Failure() == "" {
		t.Fatalf("the fixtures: ok %q, aborted %q, silent %q", ok.Failure(), aborted.Failure(), silent.Failure())
	}
	for _, tc := range []struct {
		steps  []*results.Step
		failed []string
		exit   Exit
	}{
		{[]*results.Step{ok}, nil, OK},
		{[]*results.Step{ok, aborted}, []string{"aborted (" + aborted.Failure() + ")"}, Aborted},
		{[]*results.Step{aborted, noRun}, []string{"aborted (" + aborted.Failure() + ")", "unreachable"}, Failed},
		{[]*results.Step{silent, aborted}, []string{"silent (" + silent.Failure() + ")", "aborted (" + aborted.Failure() + ")"}, Failed},
	} {
		if got := FailedSteps(tc.steps); strings.Join(got, "|") != strings.Join(tc.failed, "|") {
			t.Errorf("FailedSteps = %q, want %q", got, tc.failed)
		}
		if got := StepsExit(tc.steps); got != tc.exit {
			t.Errorf("StepsExit(%q) = %d, want %d", tc.failed, got, tc.exit)
		}
	}
}

// A command's status is the worst of its failed steps' and its parts':
// a failed step outweighs a breached check, an aborted one too, and a
// breached check an undecided comparison. Signals and usage stop a
// command of parts instead of being folded.
func TestFold(t *testing.T) {
	ok := &results.Step{ID: "ok", Run: &results.Run{Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	noRun := &results.Step{ID: "unreachable", Failed: "connection refused"}
	aborted := &results.Step{ID: "aborted", Run: &results.Run{Aborted: "p99<1ms broke", Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	for _, tc := range []struct {
		name  string
		steps []*results.Step
		parts []Exit
		want  Exit
	}{
		{"nothing", nil, nil, OK},
		{"steps ran, no check", []*results.Step{ok}, []Exit{OK}, OK},
		{"a breached check", []*results.Step{ok}, []Exit{Breached}, Breached},
		{"an undecided check", []*results.Step{ok}, []Exit{Undecided}, Undecided},
		{"breached over undecided", nil, []Exit{Undecided, Breached, OK}, Breached},
		{"a failed step over a breached check", []*results.Step{ok, noRun}, []Exit{Breached}, Failed},
		{"an aborted step over a breached check", []*results.Step{ok, aborted}, []Exit{Breached}, Aborted},
		{"a failed step over an aborted one", []*results.Step{aborted, noRun}, []Exit{OK}, Failed},
		{"a failed part (a lab's sweep, a study's step)", nil, []Exit{Breached, Failed, Aborted}, Failed},
		{"an aborted part", nil, []Exit{Undecided, Aborted}, Aborted},
		{"parts with steps", []*results.Step{ok, aborted}, []Exit{Undecided}, Aborted},
	} {
		if got := Fold(tc.steps, tc.parts...); got != tc.want {
			t.Errorf("%s: Fold = %v, want %v", tc.name, got, tc.want)
		}
	}
	for e, want := range map[Exit]bool{OK: false, Failed: false, Usage: true, Undecided: false, Breached: false, Aborted: false, Interrupted: true, Terminated: true} {
		if e.Stops() != want {
			t.Errorf("%v.Stops() = %v, want %v", e, e.Stops(), want)
		}
	}
}

// A command of steps exits as Fold says and names its failed steps in
// one wording, whichever command it is: a sweep's (FailedSteps), a lab's
// (each with its protocol), a study's (its steps' names and statuses).
func TestFoldSteps(t *testing.T) {
	ok := &results.Step{ID: "ok", Run: &results.Run{Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	noRun := &results.Step{ID: "unreachable", Failed: "connection refused"}
	aborted := &results.Step{ID: "aborted", Run: &results.Run{Aborted: "p99<1ms broke", Summary: results.Summary{Requests: 10, Duration: results.Duration(time.Second), LastOK: results.Duration(time.Second)}}}
	all := []*results.Step{ok, noRun, aborted}
	for _, tc := range []struct {
		name   string
		steps  []*results.Step
		failed []string
		total  int
		parts  []Exit
		code   Exit
		line   string
	}{
		{"none failed", []*results.Step{ok}, FailedSteps([]*results.Step{ok}), 1, []Exit{OK}, OK, ""},
		{"none failed, a check breached", []*results.Step{ok}, nil, 1, []Exit{Breached}, Breached, ""},
		{"a sweep", all, FailedSteps(all), 5, []Exit{Breached}, Failed,
			"2 of 5 steps failed: unreachable, aborted (p99<1ms broke)"},
		{"a sweep, aborted only", []*results.Step{ok, aborted}, FailedSteps([]*results.Step{ok, aborted}), 2, nil, Aborted,
			"1 of 2 steps failed: aborted (p99<1ms broke)"},
		{"a lab", all, []string{"http1 unreachable", "h2 aborted"}, 3, []Exit{Undecided}, Failed,
			"2 of 3 steps failed: http1 unreachable, h2 aborted"},
		{"a study", nil, []string{"fig3"}, 4, []Exit{OK, Aborted, Undecided}, Aborted, "1 of 4 steps failed: fig3"},
	} {
		code, line := FoldSteps(tc.steps, tc.failed, tc.total, tc.parts...)
		if code != tc.code || line != tc.line {
			t.Errorf("%s: FoldSteps = %v, %q; want %v, %q", tc.name, code, line, tc.code, tc.line)
		}
	}
}

// A run's status and why: aborted before interrupted before its verdict,
// each hiding the ones after it; and, folded with Worst, before its
// check's status.
func TestRunExit(t *testing.T) {
	answered := func(ok, failed int64) results.Summary {
		return results.Summary{Requests: ok, Errors: results.Errors{Timeout: failed},
			Duration: results.Duration(10 * time.Second), LastOK: results.Duration(10 * time.Second)}
	}
	budget, err := ParseErrorBudget(DefaultErrorBudget)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		aborted     string
		interrupted bool
		summary     results.Summary
		checked     Exit
		want        Exit
		why         string
	}{
		{"ok", "", false, answered(100, 0), OK, OK, ""},
		{"a breached check", "", false, answered(100, 0), Breached, Breached, ""},
		{"an undecided check", "", false, answered(100, 0), Undecided, Undecided, ""},
		{"failed over a breached check", "", false, answered(0, 10), Breached, Failed, "no request succeeded: 10 of 10 failed (timeout × 10)"},
		{"failed over an undecided check", "", false, answered(50, 50), Undecided, Failed,
			"50 of 100 requests failed (50.0%: timeout 50), more than --max-errors 10%"},
		{"interrupted over a failed verdict", "", true, answered(0, 10), Breached, Interrupted,
			"interrupted before the end of its window"},
		{"interrupted, answered", "", true, answered(100, 0), OK, Interrupted,
			"interrupted before the end of its window"},
		{"aborted over interrupted", "p99<1ms broke at 2s", true, answered(0, 10), Breached, Aborted, "p99<1ms broke at 2s"},
		{"aborted over a check", "p99<1ms broke at 2s", false, answered(100, 0), Breached, Aborted, "p99<1ms broke at 2s"},
	} {
		run := &results.Run{Aborted: tc.aborted, Interrupted: tc.interrupted, Summary: tc.summary}
		code, why := RunExit(run, budget)
		if got := Worst(code, tc.checked); got != tc.want || why != tc.why {
			t.Errorf("%s: RunExit folded with %v = %v, %q; want %v, %q", tc.name, tc.checked, got, why, tc.want, tc.why)
		}
	}
}

// A run that never started its load: a failure Ctrl-C came during is the
// interrupt's (130, saying so), blaming no target; a usage error stays one,
// and a failure with no Ctrl-C the target's.
func TestNotStarted(t *testing.T) {
	const why = "interrupted before the load started, while connecting to 127.0.0.1:1: nothing was measured"
	for _, tc := range []struct {
		code        Exit
		interrupted bool
		want        Exit
		why         string
	}{
		{Failed, true, Interrupted, why},
		{Failed, false, Failed, ""},
		{Usage, true, Usage, ""},
		{Usage, false, Usage, ""},
		{OK, true, OK, ""},
	} {
		got, gotWhy := NotStarted(tc.code, tc.interrupted, "127.0.0.1:1")
		if got != tc.want || gotWhy != tc.why {
			t.Errorf("NotStarted(%v, %v) = %v, %q; want %v, %q", tc.code, tc.interrupted, got, gotWhy, tc.want, tc.why)
		}
	}
}

// RunOutcome: a write that failed is a failed run (1), whatever the
// verdict; else the worst of the run's status and its checks'.
func TestRunOutcome(t *testing.T) {
	for _, tc := range []struct {
		code, checked Exit
		writes        []string
		want          Exit
		why           string
	}{
		{OK, OK, nil, OK, ""},
		{OK, Breached, nil, Breached, ""},
		{Failed, Breached, nil, Failed, ""},
		{Aborted, Undecided, nil, Aborted, ""},
		{Interrupted, OK, nil, Interrupted, ""},
		{OK, OK, []string{"--json: disk full"}, Failed, "--json: disk full"},
		{Aborted, Breached, []string{"--hlog: x", "--json: y"}, Failed, "--hlog: x; --json: y"},
		{Interrupted, OK, []string{"--junit: z"}, Failed, "--junit: z"},
	} {
		got, why := RunOutcome(tc.code, tc.checked, tc.writes)
		if got != tc.want || why != tc.why {
			t.Errorf("RunOutcome(%v, %v, %q) = %v, %q; want %v, %q", tc.code, tc.checked, tc.writes, got, why, tc.want, tc.why)
		}
	}
}

// A command of steps (sweep, --find-max, k8s paths) ends with Ctrl-C's
// status ahead of everything, a failed run's ahead of a check that could
// not be written, and only then with its steps' fold.
func TestSweepOutcome(t *testing.T) {
	runErr, checkErr := errors.New("the sweep failed"), errors.New("--junit: disk full")
	for _, tc := range []struct {
		name        string
		runErr      error
		checkErr    error
		interrupted bool
		folded      Exit
		code        Exit
		err         error
	}{
		{"all good", nil, nil, false, OK, OK, nil},
		{"the fold: a breached check", nil, nil, false, Breached, Breached, nil},
		{"the fold: failed steps", nil, nil, false, Failed, Failed, nil},
		{"Ctrl-C over the fold", nil, nil, true, Failed, Interrupted, nil},
		{"Ctrl-C over a failed run", runErr, nil, true, Breached, Interrupted, nil},
		{"Ctrl-C over a JUnit not written", nil, checkErr, true, OK, Interrupted, nil},
		{"a failed run over the fold", runErr, nil, false, Breached, Failed, runErr},
		{"a failed run over a JUnit not written", runErr, checkErr, false, Aborted, Failed, runErr},
		{"a JUnit not written over the fold", nil, checkErr, false, Breached, Failed, checkErr},
		{"a JUnit not written over an OK fold", nil, checkErr, false, OK, Failed, checkErr},
	} {
		code, err := SweepOutcome(tc.runErr, tc.checkErr, tc.interrupted, tc.folded)
		if code != tc.code || err != tc.err {
			t.Errorf("%s: SweepOutcome = %v, %v; want %v, %v", tc.name, code, err, tc.code, tc.err)
		}
	}
}
