package paths

import (
	"testing"

	"loadgen/results/compare"
)

// A pod path below its tolerance is a breach (99); a measurement that
// failed, or is missing, a failed run (1), whatever else the rows say.
func TestExit(t *testing.T) {
	row := func(v string) Row { return Row{Verdict: v} }
	for _, tc := range []struct {
		rows []Row
		want compare.Exit
	}{
		{nil, compare.OK},
		{[]Row{row(VerdictBaseline), row(VerdictOK), row(VerdictNotMeasurable)}, compare.OK},
		{[]Row{row(VerdictBaseline), row(VerdictBelow)}, compare.Breached},
		{[]Row{row(VerdictBelow), row(VerdictFailed)}, compare.Failed},
		{[]Row{row(VerdictFailed), row(VerdictBelow)}, compare.Failed},
		{[]Row{row(VerdictOK), row(VerdictNoBaseline)}, compare.Failed},
		{[]Row{row(VerdictBelow), row(VerdictNotRun)}, compare.Failed},
		{[]Row{row(VerdictOK), {Verdict: VerdictOK, Failures: []string{"repeat 2: timeout"}}}, compare.Failed},
	} {
		if got := Exit(tc.rows); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.rows, got, tc.want)
		}
	}
}
