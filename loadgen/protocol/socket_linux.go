package protocol

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Socket creates a non-blocking TCP socket (TCP_NODELAY, as Go's dialer
// sets it) and starts connecting it to the target. The connection is up
// once the socket is writable and SO_ERROR is 0.
func (t *Target) Socket() (int, error) {
	ap, err := t.addrPort()
	if err != nil {
		return -1, err
	}
	family, sa := unix.AF_INET, unix.Sockaddr(nil)
	if a := ap.Addr(); a.Is4() || a.Is4In6() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.Unmap().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, sa); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return -1, fmt.Errorf("dial tcp %s: %w", t.Addr, os.NewSyscallError("connect", err))
	}
	return fd, nil
}

// SocketError is the outcome of a non-blocking connect once its socket is
// writable: nil when connected.
func SocketError(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if v != 0 {
		return os.NewSyscallError("connect", unix.Errno(v))
	}
	return nil
}
