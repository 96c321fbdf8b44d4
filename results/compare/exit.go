package compare

import "fmt"

// Exit is loadgen's exit status: the one table a CI job branches on, for
// every command that runs load or judges results (run, sweep, lab, size,
// study, k8s run, k8s paths, compare).
//
//	code  name         meaning
//	0     OK           every run ran, every assertion held, nothing regressed
//	1     Failed       a run failed: the target unreachable or it stopped
//	                   answering, no request succeeded, more failed than
//	                   --max-errors allows, a step of a sweep failed, a result
//	                   could not be written or read
//	2     Usage        the command line was wrong: nothing ran
//	98    Undecided    the gate could not decide: a figure is worse than
//	                   --max-regression but within what contention for CPU
//	                   on a busy machine can explain (--allow-contended: 0)
//	99    Breached     an assertion did not hold, or a figure regressed
//	                   past the baseline (k6's code for failed thresholds)
//	108   Aborted      --abort-on-fail stopped the run: an assertion broke
//	                   while it ran (k6's code for a test that aborted itself)
//	130   Interrupted  Ctrl-C (SIGINT, 128+2)
//	143   Terminated   SIGTERM (128+15)
//
// When several hold, the worst wins, in the order Usage, Failed,
// Interrupted, Terminated, Aborted, Breached, Undecided, OK (Worst): a
// broken run says more than a missed objective, and a missed objective
// more than one that could not be judged. 98 sits beside 99 as the gate's
// other outcome, outside sysexits' 64–78 and the shell's 126 and up; k6
// gives 98 only to its cloud service's "could not get the test's
// progress", never to a local run.
type Exit int

// The exit statuses.
const (
	OK          Exit = 0
	Failed      Exit = 1
	Usage       Exit = 2
	Undecided   Exit = 98
	Breached    Exit = 99
	Aborted     Exit = 108
	Interrupted Exit = 130
	Terminated  Exit = 143
)

// severity orders the statuses for Worst: higher is worse.
var severity = map[Exit]int{OK: 0, Undecided: 1, Breached: 2, Aborted: 3, Terminated: 4, Interrupted: 5, Failed: 6, Usage: 7}

// Worst is the worst of the statuses (OK for none): the one to exit with
// when several hold.
func Worst(codes ...Exit) Exit {
	w := OK
	for _, c := range codes {
		if severity[c] > severity[w] {
			w = c
		}
	}
	return w
}

// Stops tells whether a part's status ends a command made of parts (a
// lab's sweeps, a study's steps) there, not folded (Fold) with the
// others': a signal (Interrupted, Terminated) or a command line refused
// (Usage).
func (e Exit) Stops() bool { return e == Interrupted || e == Terminated || e == Usage }

// String names the status: "breached (99)".
func (e Exit) String() string {
	names := map[Exit]string{OK: "ok", Failed: "failed", Usage: "usage", Undecided: "undecided", Breached: "breached",
		Aborted: "aborted", Interrupted: "interrupted", Terminated: "terminated"}
	if n, ok := names[e]; ok {
		return fmt.Sprintf("%s (%d)", n, int(e))
	}
	return fmt.Sprint(int(e))
}

// ExitRow is one status of the exit table as a command's help says it, in
// its flags' words.
type ExitRow struct {
	Code Exit
	Help string
}

// ExitTable is the exit table of every command that runs load or judges
// results, as their help says it (loadgen run --help prints it whole):
// every status, in ascending order, each once.
func ExitTable() []ExitRow {
	return []ExitRow{
		{OK, "all good: every run ran, every --assert held, nothing regressed"},
		{Failed, "a run failed: the target unreachable or it stopped answering, no request succeeded, more failed than --max-errors, a result not written"},
		{Usage, "the command line was wrong: nothing ran"},
		{Undecided, "not decidable: worse than --max-regression, but within what contention on a busy machine can explain (--allow-contended: 0)"},
		{Breached, "an --assert did not hold, or a figure regressed past --baseline"},
		{Aborted, "--abort-on-fail stopped the run: an --assert broke while it ran"},
		{Interrupted, "Ctrl-C"},
		{Terminated, "SIGTERM"},
	}
}

// InterruptedLine is what a command says on standard error when Ctrl-C
// (or SIGTERM) stopped it, with what became of what it did (what): a
// sweep's and a study's finished steps (store.ContinueWith), the requests
// a run had in flight, k8s paths' measurements and objects. One wording
// for every command: "interrupted: WHAT".
func InterruptedLine(what string) string { return "interrupted: " + what }
