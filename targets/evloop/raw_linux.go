package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// System calls on non-blocking sockets never block, so they go in as raw
// system calls: without the runtime's entersyscall/exitsyscall, which on
// loopback costs about as much as the call itself.

// Read reads from a non-blocking fd: EAGAIN when nothing is there.
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write writes to a non-blocking fd: it may write less than p, or nothing
// (EAGAIN) when the socket's buffer is full.
func Write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Writev writes a then b to a non-blocking fd with one system call, as
// Write does.
func Writev(fd int, a, b []byte) (int, error) {
	iov := [2]unix.Iovec{{Base: unsafe.SliceData(a)}, {Base: unsafe.SliceData(b)}}
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), 2)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Close closes fd; it leaves every epoll set with it.
func Close(fd int) { unix.Close(fd) }

// Readable is what a connection that is read from is watched for: bytes,
// and its peer's end of writing, which a read that takes the last bytes
// leaves unreported.
const Readable = unix.EPOLLIN | unix.EPOLLRDHUP

// Drained reports whether a read of n bytes into size, made on an event
// of events, left the socket with nothing to report: it came back short,
// and the event saw no end of writing, hang-up or error (those still make
// the socket readable once its bytes are read).
func Drained(n, size int, events uint32) bool {
	return n < size && events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0
}
