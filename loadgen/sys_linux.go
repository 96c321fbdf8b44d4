package loadgen

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
)

// The event loop's system calls on its sockets never block (MSG_DONTWAIT,
// whatever the socket's mode), so they go in as raw system calls: without
// the runtime's bookkeeping for a call that might (entersyscall/
// exitsyscall), which costs as much as the call itself on loopback. They
// are recvfrom and sendto without an address, which skip the file layer a
// read or write goes through. The wait for events, which blocks, goes in
// raw too when the loop may keep its P: see package heldp; so does a solo
// connection's blocking read (heldp.Recv).

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawWrite writes p to fd with MSG_NOSIGNAL, so that a peer gone is EPIPE,
// not a signal.
func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// epollWaitFor waits for events up to d (< 0: until one comes) as a
// blocking system call the runtime knows of (it lends the caller's P out
// meanwhile): to the nanosecond through epoll_pwait2 where the kernel has
// it (heldp.Precise), otherwise in whole milliseconds, rounded up.
func epollWaitFor(epfd int, evs []unix.EpollEvent, d time.Duration) (int, error) {
	if d >= 0 && heldp.Precise() {
		ts := unix.NsecToTimespec(int64(d))
		n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
	ms := -1
	if d >= 0 {
		ms = int(min((d+time.Millisecond-1)/time.Millisecond, 1<<30))
	}
	return unix.EpollWait(epfd, evs, ms)
}
