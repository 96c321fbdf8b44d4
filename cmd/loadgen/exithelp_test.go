package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"loadgen/results/compare"
)

// The help's exit table (exitHelp, which run --help prints) names every
// status compare.Exit has, in its order, each once; a status added to
// compare.Exit and not to the help fails here.
func TestExitHelpNamesEveryStatus(t *testing.T) {
	var got []string
	for _, m := range regexp.MustCompile(`(?m)(?:^  |; )(\d+) `).FindAllStringSubmatch(exitHelp, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, e := range []compare.Exit{compare.OK, compare.Failed, compare.Usage, compare.Undecided, compare.Breached,
		compare.Aborted, compare.Interrupted, compare.Terminated} {
		want = append(want, fmt.Sprint(int(e)))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("exitHelp names %v, want %v:\n%s", got, want, exitHelp)
	}
	if code, help, _ := cli(t, "run", "--help"); code != 0 || !strings.Contains(help, exitHelp) {
		t.Errorf("run --help: exit %d, the table missing:\n%s", code, help)
	}
	for _, cmd := range []string{"lab", "study"} {
		if code, help, _ := cli(t, cmd, "--help"); code != 0 || !strings.Contains(help, exitHelpRef) {
			t.Errorf("%s --help: exit %d, no %q:\n%s", cmd, code, exitHelpRef, help)
		}
	}
}

// The table as run --help prints it, laid out from compare.ExitTable:
// byte for byte the help it was written as.
func TestExitHelpText(t *testing.T) {
	const want = `Exit status, of every command that runs load or judges results:
  0    all good: every run ran, every --assert held, nothing regressed
  1    a run failed: the target unreachable or it stopped answering, no request
       succeeded, more failed than --max-errors, a result not written
  2    the command line was wrong: nothing ran
  98   not decidable: worse than --max-regression, but within what contention
       on a busy machine can explain (--allow-contended: 0)
  99   an --assert did not hold, or a figure regressed past --baseline
  108  --abort-on-fail stopped the run: an --assert broke while it ran
  130  Ctrl-C; 143 SIGTERM`
	if exitHelp != want {
		t.Errorf("exitHelp:\n%s\nwant\n%s", exitHelp, want)
	}
}
