package worker

import (
	"errors"
	"fmt"
	"strings"

	"loadgen/meshes/k8s"
)

// CheckWire refuses a coordinator that speaks another wire version than
// this worker (k8s.WireVersion): its command line and the `loadgen run`
// flags it built may mean something else here. wire 0 is a coordinator
// that did not say, one older than the check. The error is one line
// naming both sides' versions.
func CheckWire(wire int, coordinator, self string) error {
	if wire == k8s.WireVersion {
		return nil
	}
	them := "a loadgen older than the wire check"
	if wire != 0 {
		them = fmt.Sprintf("loadgen %s, wire %d", orUnknown(coordinator), wire)
	}
	return fmt.Errorf("%w: the coordinator (k8s run) is %s; this worker's image is loadgen %s, wire %d: "+
		"run k8s run with an --image of its own version", ErrWire, them, orUnknown(self), k8s.WireVersion)
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// ErrWire is a worker and a coordinator that do not speak the same wire
// version.
var ErrWire = errors.New("wire version mismatch")

// wireMismatch says why a failed worker's log shows that it does not
// speak the coordinator's wire version, or "": its report says so, or an
// image older than the check failed on the FlagWire the coordinator put
// first on its command line.
func wireMismatch(log []byte, r *Report) string {
	if r != nil && r.Error != "" && strings.HasPrefix(r.Error, ErrWire.Error()) {
		return r.Error
	}
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "unknown flag: "+k8s.FlagWire) {
			return fmt.Sprintf("%s: the worker's image is a loadgen older than the wire check (%s); this coordinator speaks wire %d: "+
				"run k8s run with an --image of its own version", ErrWire, strings.TrimSpace(l), k8s.WireVersion)
		}
	}
	return ""
}
