package live

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"loadgen/results/compare"
)

// TestOutcome: a command's end on the page: done without an error,
// interrupted on Ctrl-C's status, "done, failed" with an exit status of
// the command's own (a failed step, a regression), and the error itself
// for any other.
func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status compare.Exit
		want   string
	}{
		{nil, compare.OK, "done"},
		{errors.New("exit status 130"), compare.Interrupted, "interrupted"},
		{errors.New("exit status 1"), compare.Failed, "done, failed (exit status 1)"},
		{errors.New("exit status 99"), compare.Breached, "done, failed (exit status 99)"},
		{errors.New("exit status 143"), compare.Terminated, "done, failed (exit status 143)"},
		{errors.New("dial tcp 127.0.0.1:1: connection refused"), compare.OK, "failed: dial tcp 127.0.0.1:1: connection refused"},
	} {
		if got := Outcome(tc.err, tc.status); got != tc.want {
			t.Errorf("Outcome(%v, %d) = %q, want %q", tc.err, tc.status, got, tc.want)
		}
	}
}

func TestCheckLinger(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "<nil>"},
		{5 * time.Minute, "<nil>"},
		{-time.Nanosecond, "--ui-linger must not be negative, got -1ns"},
		{-time.Second, "--ui-linger must not be negative, got -1s"},
	} {
		if got := fmt.Sprint(CheckLinger(tc.d)); got != tc.want {
			t.Errorf("CheckLinger(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
