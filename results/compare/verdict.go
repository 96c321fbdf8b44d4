package compare

import (
	"fmt"
	"strconv"
	"strings"

	"loadgen/internal/units"
	"loadgen/results"
)

// ErrorBudget is how many failed requests a run may have and still pass
// (run's --max-errors): a share of what it tried, or a count.
type ErrorBudget struct {
	Share float64 // used when Count < 0
	Count int64
}

// DefaultErrorBudget fails a run where more than one request in ten failed.
const DefaultErrorBudget = "10%"

// ParseErrorBudget reads a budget: a share ("10%"; "100%" never fails a
// run for its errors) or a count ("100").
func ParseErrorBudget(s string) (ErrorBudget, error) {
	t := strings.TrimSpace(s)
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil || v < 0 || v > 100 || v != v {
			return ErrorBudget{}, fmt.Errorf("%q: want a share from 0%% to 100%%, or a count", s)
		}
		return ErrorBudget{Share: v / 100, Count: -1}, nil
	}
	n, err := units.ParseCount(t)
	if err != nil {
		return ErrorBudget{}, fmt.Errorf("%q: want a share like 10%% (100%%: never fail for errors) or a count like 100", s)
	}
	return ErrorBudget{Count: n}, nil
}

// RunVerdict says why a finished run failed, or "" if it did not: no
// request succeeded, it stopped answering, or more requests failed than
// the budget (--max-errors) allows. Every failure counts: timeouts,
// resets, error statuses, refused connections.
func RunVerdict(run *results.Run, b ErrorBudget) string {
	s := run.Summary
	if why := s.Verdict(); why != "" {
		return why
	}
	tried, failed := s.Attempts(), s.Errors.Total()
	over := failed > b.Count
	limit := strconv.FormatInt(b.Count, 10)
	if b.Count < 0 {
		over = float64(failed) > b.Share*float64(tried)
		limit = strconv.FormatFloat(100*b.Share, 'g', -1, 64) + "%"
	}
	if over {
		return fmt.Sprintf("%d of %d requests failed (%.1f%%: %s), more than --max-errors %s",
			failed, tried, 100*float64(failed)/float64(tried), s.Errors, limit)
	}
	return ""
}

// RunExit is the status a finished run comes to by itself (loadgen run)
// and why, in this order: Aborted when --abort-on-fail stopped it (why:
// the assertion that broke, run.Aborted), Interrupted when Ctrl-C cut it
// short (why: "interrupted before the end of its window"), Failed when it
// failed its verdict (why: RunVerdict's against the budget b), else OK
// and "". why is what the run's check (Check.Run) fails JUnit's "run"
// case with; the check's status folds in with Worst, which ranks each of
// Aborted, Interrupted and Failed above any check's (Breached, Undecided).
func RunExit(run *results.Run, b ErrorBudget) (code Exit, why string) {
	switch {
	case run.Aborted != "":
		return Aborted, run.Aborted
	case run.Interrupted:
		return Interrupted, "interrupted before the end of its window"
	}
	if why := RunVerdict(run, b); why != "" {
		return Failed, why
	}
	return OK, ""
}

// RunOutcome is the status a finished run exits with (loadgen run): its
// own (RunExit's code) folded with its checks' (Worst), unless one of its
// outputs could not be written (writes: each failure's words), which fails
// it whatever its verdict (Failed, why: the failures joined with "; "): a
// result that is not where it was asked for is a failed run.
func RunOutcome(code, checked Exit, writes []string) (Exit, string) {
	if len(writes) > 0 {
		return Failed, strings.Join(writes, "; ")
	}
	return Worst(code, checked), ""
}

// SweepOutcome is the status a command that ran steps ends with — sweep,
// its --find-max, k8s paths — and the error to report with it, in this
// order: Interrupted when Ctrl-C stopped it (interrupted), ahead of
// everything below, its failed steps and their fold included; Failed with
// runErr when the run failed, ahead of checkErr, what judging or recording
// its steps failed with after they ran (a JUnit file not written,
// --find-max's failed searches), which is Failed too; else folded, what
// its steps and checks come to (FoldSteps', paths.Exit's for k8s paths'
// rows), with no error.
func SweepOutcome(runErr, checkErr error, interrupted bool, folded Exit) (Exit, error) {
	switch {
	case interrupted:
		return Interrupted, nil
	case runErr != nil:
		return Failed, runErr
	case checkErr != nil:
		return Failed, checkErr
	}
	return folded, nil
}

// NotStarted is the status of a run that ended before its load started,
// with no result, and why when the status is not code: code is what its
// error comes to by itself — Failed for the engine's (loadgen.Run's: the
// target unreachable), client.BuildExit's for its Dialer's — and
// interrupted tells whether Ctrl-C came meanwhile. A failure that Ctrl-C
// came during is the interrupt's, not the target's: Interrupted, why
// "interrupted before the load started, while connecting to TARGET:
// nothing was measured". Any other status stays code (a usage error is
// one whether or not Ctrl-C came), why "".
func NotStarted(code Exit, interrupted bool, target string) (Exit, string) {
	if code == Failed && interrupted {
		return Interrupted, "interrupted before the load started, while connecting to " + target + ": nothing was measured"
	}
	return code, ""
}

// FailedSteps names the steps of a sweep that failed (Step.Failure): no
// run (the target could not be reached, the step could not be built), or
// a run in which no request succeeded, or none after a point; a step with
// a run is named with its reason.
func FailedSteps(steps []*results.Step) []string {
	var out []string
	for _, st := range steps {
		switch why := st.Failure(); {
		case why == "":
		case st.Run == nil: // why is printed with the step
			out = append(out, st.ID)
		default:
			out = append(out, st.ID+" ("+why+")")
		}
	}
	return out
}

// StepsExit is the status the failed steps of a sweep come to: Failed when
// one failed for want of a run or of answers, Aborted when every failed
// one was stopped by --abort-on-fail (its assertion broke while it ran),
// OK when none failed.
func StepsExit(steps []*results.Step) Exit {
	code := OK
	for _, st := range steps {
		switch {
		case st.Failure() == "":
		case st.Run != nil && st.Run.Aborted != "":
			code = Worst(code, Aborted)
		default:
			return Failed
		}
	}
	return code
}

// Fold is the exit status of a command that ran steps and judged them —
// sweep and k8s run (their steps and check), lab (its protocols' sweeps),
// study (its steps, each a command of its own): the worst (Worst) of what
// its failed steps come to (StepsExit) and of its parts' statuses (a
// check's, each sweep's of a lab, each step's of a study, Undecided for
// what contention left undecided). A part that Stops the command is not
// folded: the command ends with it.
func Fold(steps []*results.Step, parts ...Exit) Exit {
	return Worst(StepsExit(steps), Worst(parts...))
}

// FoldSteps is the exit status of a command that ran steps (Fold: of its
// steps and its parts) and the line that names its failed steps at the
// end of its output, "" when none failed:
//
//	2 of 6 steps failed: a, b
//
// failed are the failed steps' names (FailedSteps for a sweep's and k8s
// run's, each prefixed with its protocol for a lab, a study's own steps
// for a study), total the steps of the command's plan. Every command
// that runs steps (sweep, k8s run, lab, study) words it so, after its own
// name ("sweep: ").
func FoldSteps(steps []*results.Step, failed []string, total int, parts ...Exit) (code Exit, line string) {
	if len(failed) > 0 {
		line = fmt.Sprintf("%d of %d steps failed: %s", len(failed), total, strings.Join(failed, ", "))
	}
	return Fold(steps, parts...), line
}
