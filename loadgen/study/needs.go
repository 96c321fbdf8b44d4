package study

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// CheckNeeds checks what the study name needs on this machine, in one
// line naming the first thing missing. nginx says whether nginx is found
// (where size and the demo look), its error in the words size and the
// demo say it with (meshes' to say, which a study may not import).
func CheckNeeds(needs []Need, name string, nginx func() error) error {
	for _, n := range needs {
		switch n {
		case NeedRoot:
			if runtime.GOOS != "linux" || os.Geteuid() != 0 {
				return errors.New("needs root on Linux (network namespaces): run it as root, e.g. sudo loadgen study " + name)
			}
		case NeedNginx:
			if err := nginx(); err != nil {
				return fmt.Errorf("needs nginx: %w", err)
			}
		case NeedCluster:
			// loadgen k8s run says in one line which context and server it cannot reach.
		}
	}
	return nil
}
