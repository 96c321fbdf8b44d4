package live

import (
	"fmt"
	"time"

	"loadgen/results/compare"
)

// Outcome is how a command's end reads on the page (State.End): err is
// what the command returned, status the exit status err carries
// (compare.OK when it carries none: any other error of the command). The
// dashboard never changes how a command exits; it only says it.
func Outcome(err error, status compare.Exit) string {
	switch {
	case err == nil:
		return "done"
	case status == compare.Interrupted:
		return "interrupted"
	case status != compare.OK:
		return fmt.Sprintf("done, failed (exit status %d)", status)
	}
	return "failed: " + err.Error()
}

// CheckLinger is why --ui-linger's value d cannot be, or nil: how long
// the final state stays served, never negative.
func CheckLinger(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--ui-linger must not be negative, got %v", d)
	}
	return nil
}
