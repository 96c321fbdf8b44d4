package paths

import "loadgen/results/compare"

// Exit is the status of a table's rows: Failed when a measurement failed
// or is missing (no baseline, not run), Breached when a pod path fell
// below its tolerance, else OK.
func Exit(rows []Row) compare.Exit {
	code := compare.OK
	for _, r := range rows {
		switch {
		case r.Verdict == VerdictFailed, r.Verdict == VerdictNoBaseline, r.Verdict == VerdictNotRun, len(r.Failures) > 0:
			return compare.Failed
		case r.Verdict == VerdictBelow:
			code = compare.Breached
		}
	}
	return code
}
