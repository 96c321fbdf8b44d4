package heldp

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WaitFor waits its timeout out on an empty set, to the nanosecond where
// the kernel has epoll_pwait2 and in whole milliseconds, rounded up,
// where it has not (or a seccomp profile refuses it): never shorter.
func TestWaitForTimeout(t *testing.T) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var evs [1]unix.EpollEvent
	wait := func(d time.Duration) time.Duration {
		start := time.Now()
		for {
			n, err := WaitFor(fd, evs[:], d-time.Since(start))
			if err == unix.EINTR {
				continue // the runtime's preemption signal
			}
			if err != nil || n != 0 {
				t.Fatalf("WaitFor on an empty set: %d events, %v", n, err)
			}
			return time.Since(start)
		}
	}
	t.Logf("epoll_pwait2: %v", Precise())
	if got := wait(300 * time.Microsecond); got < 300*time.Microsecond {
		t.Errorf("a wait of 300µs ended after %v", got)
	}
	defer pwait2.Store(pwait2.Load())
	pwait2.Store(-1) // as after ENOSYS or EPERM
	if got := wait(300 * time.Microsecond); got < time.Millisecond {
		t.Errorf("without epoll_pwait2, a wait of 300µs ended after %v: want it rounded up to 1 ms", got)
	}
}
