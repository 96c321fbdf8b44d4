package listening

import (
	"strings"
	"time"
)

// How long a target started as a child process serves (loadgen serve
// --for): a bound, so that one whose parent died before it could stop it
// ends on its own.
const (
	// HelperLifetime bounds a command's own helper target (the demo's
	// httpbin), which serves one command's load.
	HelperLifetime = time.Hour
	// LabLifetime bounds a lab's targets, which serve all of its steps.
	LabLifetime = 24 * time.Hour
)

// ForArgs are the arguments that give loadgen serve the lifetime d, in
// the shortest form its --for reads: "--for", "1h" (not "1h0m0s").
func ForArgs(d time.Duration) []string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return []string{"--for", s}
}
