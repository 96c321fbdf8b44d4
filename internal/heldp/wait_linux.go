package heldp

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Wait waits up to ms milliseconds (-1: until an event; 0: what is ready
// now) for events of the set epfd, as a raw system call that keeps the
// caller's P while it blocks: only for a loop that Take let keep one, or
// with ms 0.
func Wait(epfd int, evs []unix.EpollEvent, ms int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
