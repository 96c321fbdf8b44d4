package sweep

import "slices"

// notResumed are the flags a resume hint never repeats: where the results
// go and --resume, which the hint gives itself, and --dry-run, which
// never leaves anything to resume.
var notResumed = []string{"out", "resume", "dry-run"}

// ResumeFlags are, of a command's flags named names (in order), those a
// resume hint repeats when given: every one but -o, --resume and
// --dry-run. One rule for sweep, size, lab and study: a resume runs under
// the same plan, checks (--assert, --baseline, --junit, --abort-on-fail…)
// and labels as the run it continues, and a flag added later is not lost.
func ResumeFlags(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(notResumed, n) {
			out = append(out, n)
		}
	}
	return out
}
