package main

import (
	"fmt"
	"io"

	"loadgen/loadgen/sweep"
	"loadgen/results/report"
)

// checkWatches looks at a sweep's watches before any load: a pid: watch
// without a name is called by its process's name (/proc/PID/comm), as
// docs/sweep.md says; a name: watch that matches more than the path's own
// processes says so on w, naming the others.
func checkWatches(w io.Writer, spec *sweep.Spec) {
	for _, msg := range spec.WatchWarnings() {
		fmt.Fprint(w, report.Wrap("warning: "+msg, maxWidth, "  "))
	}
}
