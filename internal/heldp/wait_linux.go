package heldp

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Wait waits up to ms milliseconds (-1: until an event; 0: what is ready
// now) for events of the set epfd, as a raw system call that keeps the
// caller's P while it blocks: only for a loop that Take let keep one, or
// with ms 0.
//
// Wait and the other calls here stay functions of their own (go:noinline):
// a loop that keeps its P runs no other code that the runtime can stop, and
// the runtime's request to stop it (preemption, a stop of the world) is
// seen at the stack check a called function begins with. The signal that
// asks ends the system call with EINTR; the loop calls again, and that
// call's stack check stops it. Inlined, the check would be gone
// (TestNotInlined).
//
//go:noinline
func Wait(epfd int, evs []unix.EpollEvent, ms int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// WaitFor is Wait with a timeout to the nanosecond (< 0: until an event;
// 0: what is ready now), through epoll_pwait2 (Linux 5.11): a loop that
// waits for a request's intended start wakes at it, not at the next
// millisecond. The kernel adds its timer slack (the thread's, 50 µs by
// default) to a timeout, as it does for every poll and epoll wait: the
// wake-up is taken with another interrupt due within it. Where the kernel
// has no epoll_pwait2, or a seccomp profile that predates it refuses it
// (EPERM: a container runtime's default profile before 2021), it waits in
// whole milliseconds, rounded up (Precise says which).
//
//go:noinline
func WaitFor(epfd int, evs []unix.EpollEvent, timeout time.Duration) (int, error) {
	if timeout >= 0 && pwait2.Load() >= 0 {
		ts := unix.NsecToTimespec(int64(timeout))
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e == 0 {
			return int(n), nil
		}
		if e != unix.ENOSYS && e != unix.EPERM {
			return 0, e
		}
		pwait2.Store(-1) // EPERM: a seccomp profile older than the call
	}
	ms := -1
	if timeout >= 0 {
		ms = int(min((timeout+time.Millisecond-1)/time.Millisecond, 1<<30))
	}
	return Wait(epfd, evs, ms)
}

// pwait2 is -1 once epoll_pwait2 failed with ENOSYS or EPERM, 1 once
// Precise saw it work.
var pwait2 atomic.Int32

// Precise reports whether WaitFor waits to the nanosecond: whether the
// kernel has epoll_pwait2. It asks the kernel once (an empty wait on a
// new epoll set).
func Precise() bool {
	if pwait2.Load() == 0 {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return false
		}
		var evs [1]unix.EpollEvent
		WaitFor(fd, evs[:], 0)
		unix.Close(fd)
		if pwait2.Load() == 0 {
			pwait2.Store(1)
		}
	}
	return pwait2.Load() > 0
}

// Recv reads from a socket put in blocking mode by Blocking, as a raw
// system call that keeps the caller's P while it blocks: only for a loop
// that Take let keep one. It is how a loop that serves one connection
// reads its next message without a wait for events first: one system
// call where a wait and a read make two, as a blocking C client or server
// (sockperf, netperf) makes. It returns EAGAIN when nothing came within
// the socket's receive timeout, and EINTR when a signal came first — the
// runtime's preemption or a stop of the world: a socket with a receive
// timeout never restarts the call, so the P is not held past them. Not
// inlined, as Wait.
//
//go:noinline
func Recv(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Blocking puts a connected socket in blocking mode with a receive
// timeout of slice (at least a microsecond), for Recv. Every other call
// on it must then say MSG_DONTWAIT: a loop never blocks but in Recv and
// Wait.
func Blocking(fd int, slice time.Duration) error {
	tv := unix.NsecToTimeval(int64(max(slice, time.Microsecond)))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	return unix.SetNonblock(fd, false)
}
