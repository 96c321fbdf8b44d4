package sweep

import (
	"fmt"
	"testing"
	"time"
)

// TestRefusals: one text per rule, named as the caller gives it (a
// sweep file's key, a flag), and Validate uses them.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Occupied("out"), "out already holds a sweep: add --resume to continue it, or choose another -o"},
		{CheckRepeats("--repeats", 0), "--repeats must be at least 1, got 0"},
		{CheckRepeats("repeats", -2), "repeats must be at least 1, got -2"},
		{CheckRepeats("repeats", 1), "<nil>"},
		{CheckDuration("--duration", 0), "--duration must be positive, got 0s"},
		{CheckDuration("duration", -time.Second), "duration must be positive, got -1s"},
		{CheckDuration("duration", time.Millisecond), "<nil>"},
		{CheckWarmup("--warmup", -time.Second), "--warmup cannot be negative, got -1s"},
		{CheckWarmup("warmup", 0), "<nil>"},
	} {
		if got := fmt.Sprint(tc.err); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	for _, tc := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Repeats = -1 }, "repeats must be at least 1, got -1"},
		{func(s *Spec) { s.Duration = Duration(-time.Second) }, "duration must be positive, got -1s"},
		{func(s *Spec) { s.Warmup = Duration(-time.Second) }, "warmup cannot be negative, got -1s"},
	} {
		s := Demo(false)
		s.Paths[0].URL = "http://127.0.0.1:1"
		tc.edit(s)
		if got := fmt.Sprint(s.Validate()); got != tc.want {
			t.Errorf("Validate() = %q, want %q", got, tc.want)
		}
	}
}
