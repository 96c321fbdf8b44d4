// Package parked tells a test when a goroutine waits — parked by the
// runtime in the netpoller, a system call or a channel — so that what the
// test does next (a Close, a cancel, a read) acts on a wait in progress,
// not on one yet to begin, with no sleep to guess when that is.
package parked

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Wait waits, up to 10 s, until a goroutine waits in state (as
// runtime.Stack names it: "IO wait", "syscall", "chan receive", "select")
// with every one of frames (substrings of its stack, e.g. a function's
// qualified name) in its stack.
func Wait(t testing.TB, state string, frames ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !Now(state, frames...) {
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine waits in %q in %s after 10 s", state, strings.Join(frames, ", "))
		}
		time.Sleep(time.Millisecond)
	}
}

// Now reports whether a goroutine waits in state with every one of frames
// in its stack.
func Now(state string, frames ...string) bool {
	for _, g := range strings.Split(stacks(), "\n\n") {
		header, stack, _ := strings.Cut(g, "\n")
		_, st, ok := strings.Cut(header, " [")
		if !ok {
			continue
		}
		st, _, _ = strings.Cut(strings.TrimSuffix(st, "]:"), ",")
		if st != state {
			continue
		}
		all := true
		for _, f := range frames {
			all = all && strings.Contains(stack, f)
		}
		if all {
			return true
		}
	}
	return false
}

func stacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
