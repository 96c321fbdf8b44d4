package sweep

import (
	"slices"
	"strings"

	"loadgen/internal/shellquote"
)

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

// ResumeCommand is the command that continues a run saved in dir, as a
// hint prints it for a shell: "loadgen COMMAND FLAGS -o DIR --resume".
// command is loadgen's command as typed ("sweep", "study NAME"); flags
// are the words of the flags it repeats (those ResumeFlags keeps, as
// given: "--assert", "p99<20ms"), each quoted for a shell, as dir is. One
// wording for sweep, size, lab and study, and for a refused resume
// (ResumeRefusal).
func ResumeCommand(command string, flags []string, dir string) string {
	var b strings.Builder
	b.WriteString("loadgen " + command + " ")
	for _, f := range flags {
		b.WriteString(shellquote.Quote(f) + " ")
	}
	b.WriteString("-o " + shellquote.Quote(dir) + " --resume")
	return b.String()
}
