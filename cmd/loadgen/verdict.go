package main

import (
	"fmt"
	"strconv"
	"strings"

	"loadgen/internal/units"
	"loadgen/results"
	"loadgen/results/compare"
)

// errorBudget is --max-errors: how many failed requests a run may have and
// still exit 0, as a share of what it tried (10%) or a count (100).
type errorBudget struct {
	share float64 // used when count < 0
	count int64
}

// defaultMaxErrors fails a run where more than one request in ten failed.
const defaultMaxErrors = "10%"

func parseErrorBudget(s string) (errorBudget, error) {
	t := strings.TrimSpace(s)
	if pct, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil || v < 0 || v > 100 || v != v {
			return errorBudget{}, fmt.Errorf("--max-errors %q: want a share from 0%% to 100%%, or a count", s)
		}
		return errorBudget{share: v / 100, count: -1}, nil
	}
	n, err := units.ParseCount(t)
	if err != nil {
		return errorBudget{}, fmt.Errorf("--max-errors %q: want a share like 10%% (100%%: never fail for errors) or a count like 100", s)
	}
	return errorBudget{count: n}, nil
}

// runVerdict says why a finished run failed, or "" if it did not: no
// request succeeded, or more failed than the budget allows. Every failure
// counts: timeouts, resets, error statuses, refused connections.
func runVerdict(run *results.Run, b errorBudget) string {
	s := run.Summary
	if why := s.Verdict(); why != "" {
		return why
	}
	tried, failed := s.Attempts(), s.Errors.Total()
	over := failed > b.count
	limit := strconv.FormatInt(b.count, 10)
	if b.count < 0 {
		over = float64(failed) > b.share*float64(tried)
		limit = strconv.FormatFloat(100*b.share, 'g', -1, 64) + "%"
	}
	if over {
		return fmt.Sprintf("%d of %d requests failed (%.1f%%: %s), more than --max-errors %s",
			failed, tried, 100*float64(failed)/float64(tried), s.Errors, limit)
	}
	return ""
}

// failedSteps names the steps of a sweep that failed (Step.Failure): no
// run (the target could not be reached, the step could not be built), or
// a run in which no request succeeded, or none after a point.
func failedSteps(steps []*results.Step) []string {
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

// stepsExit is the status the failed steps of a sweep come to: Failed when
// one failed for want of a run or of answers, Aborted when every failed
// one was stopped by --abort-on-fail (its assertion broke while it ran),
// OK when none failed.
func stepsExit(steps []*results.Step) compare.Exit {
	code := compare.OK
	for _, st := range steps {
		switch {
		case st.Failure() == "":
		case st.Run != nil && st.Run.Aborted != "":
			code = compare.Worst(code, compare.Aborted)
		default:
			return compare.Failed
		}
	}
	return code
}
