package main

import "loadgen/results"

// finishedSteps counts the steps that ran to their end (or failed): not
// one Ctrl-C cut short, which a resume runs again.
func finishedSteps(steps []*results.Step) int {
	n := 0
	for _, st := range steps {
		if !st.Interrupted && (st.Run == nil || !st.Run.Interrupted) {
			n++
		}
	}
	return n
}
