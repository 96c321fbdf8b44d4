package sweep

import (
	"fmt"
	"time"
)

// Occupied is the refusal of a results directory that already holds a
// sweep when the run does not resume it: one text for sweep, size, lab
// and the Runner.
func Occupied(dir string) error {
	return fmt.Errorf("%s already holds a sweep: add --resume to continue it, or choose another -o", dir)
}

// CheckRepeats is the rule of a sweep's repeats, named as the caller
// gives it (the key repeats, the flag --repeats): at least 1.
func CheckRepeats(name string, n int) error {
	if n < 1 {
		return fmt.Errorf("%s must be at least 1, got %d", name, n)
	}
	return nil
}

// CheckDuration is the rule of a step's measured duration, named as the
// caller gives it (duration, --duration): positive.
func CheckDuration(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %s", name, d)
	}
	return nil
}

// CheckWarmup is the rule of a step's warm-up, named as the caller gives
// it (warmup, --warmup): none, or positive.
func CheckWarmup(name string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s cannot be negative, got %s", name, d)
	}
	return nil
}
