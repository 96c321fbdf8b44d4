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
