package loadgen

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's system calls on its non-blocking sockets never block,
// so they go in as raw system calls: without the runtime's bookkeeping
// for a call that might (entersyscall/exitsyscall), which costs as much as
// the call itself on loopback. The wait for events, which blocks, goes in
// raw too when the loop may keep its P: see package heldp.

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
