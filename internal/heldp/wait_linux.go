package heldp

import (
	"time"
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

// Recv reads from a socket put in blocking mode by Blocking, as a raw
// system call that keeps the caller's P while it blocks: only for a loop
// that Take let keep one. It is how a loop that serves one connection
// reads its next message without a wait for events first: one system
// call where a wait and a read make two, as a blocking C client or server
// (sockperf, netperf) makes. It returns EAGAIN when nothing came within
// the socket's receive timeout, and EINTR when a signal came first — the
// runtime's preemption or a stop of the world: a socket with a receive
// timeout never restarts the call, so the P is not held past them.
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
