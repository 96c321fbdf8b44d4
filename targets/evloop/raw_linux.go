package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// These system calls never block (MSG_DONTWAIT, on a non-blocking socket
// or one a loop reads blocking with heldp.Recv), so they go in as raw
// system calls: without the runtime's entersyscall/exitsyscall, which on
// loopback costs about as much as the call itself.

// Read reads from a non-blocking socket: EAGAIN when nothing is there.
// It is recvfrom without an address, which skips the file layer a read
// goes through (a few per cent of a loopback round trip).
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write writes to a non-blocking socket: it may write less than p, or
// nothing (EAGAIN) when the socket's buffer is full. It is sendto without
// an address, as Read is recvfrom; MSG_NOSIGNAL: a peer gone is EPIPE,
// not a signal.
func Write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Writev writes a then b to a non-blocking socket with one system call
// (sendmsg), as Write does.
func Writev(fd int, a, b []byte) (int, error) {
	iov := [2]unix.Iovec{{Base: unsafe.SliceData(a)}, {Base: unsafe.SliceData(b)}}
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	msg := unix.Msghdr{Iov: &iov[0]}
	msg.SetIovlen(len(iov))
	n, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
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
