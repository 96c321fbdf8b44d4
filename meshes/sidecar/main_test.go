package sidecar

import (
	"fmt"
	"os"
	"testing"

	"loadgen/meshes/lab"
)

// TestMain first removes the namespaces of test runs whose process is
// gone: a run killed midway leaves its lgt<pid>… pods.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 {
		if removed, _ := lab.CleanupStaleTests(); len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "removed %d namespaces of killed runs: %v\n", len(removed), removed)
		}
	}
	os.Exit(m.Run())
}
