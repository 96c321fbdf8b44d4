//go:build linux

package lab

import (
	"fmt"
	"os"
	"testing"
)

// TestMain first removes the namespaces of test runs (and labs) whose
// process is gone: a run killed midway leaves its lgt<pid>… namespaces.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 && os.Getenv(tunnelEnv) == "" {
		if removed, _ := CleanupStaleTests(); len(removed) > 0 {
			fmt.Fprintf(os.Stderr, "removed %d namespaces of killed runs: %v\n", len(removed), removed)
		}
	}
	os.Exit(m.Run())
}
