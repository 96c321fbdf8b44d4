package results

import "testing"

func TestFinishedSteps(t *testing.T) {
	ran := &Step{Run: &Run{}}
	failed := &Step{Failed: "proxy died"}         // no run: failed, which a resume keeps
	cut := &Step{Interrupted: true, Run: &Run{}}  // Ctrl-C before its load ended
	runCut := &Step{Run: &Run{Interrupted: true}} // its run stopped early
	for _, c := range []struct {
		name  string
		steps []*Step
		want  int
	}{
		{"none", nil, 0},
		{"ran", []*Step{ran}, 1},
		{"failed counts", []*Step{ran, failed}, 2},
		{"interrupted step", []*Step{ran, cut}, 1},
		{"interrupted run", []*Step{runCut, ran, failed}, 2},
		{"all cut", []*Step{cut, runCut}, 0},
	} {
		if got := FinishedSteps(c.steps); got != c.want {
			t.Errorf("%s: %d finished, want %d", c.name, got, c.want)
		}
	}
}
