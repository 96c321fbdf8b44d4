package evloop

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Listener is a listening TCP socket that event loops accept from: every
// loop's Poller may watch it, and a connection goes to the loop whose
// Accept gets it first.
type Listener struct {
	fd   int
	addr net.Addr
}

// Take takes the socket of a TCP listener for event loops: the loops get
// a duplicate of it, non-blocking, and ln itself is closed, so that the
// netpoller no longer wakes for its connections. Closing the Listener
// closes the socket.
func Take(ln net.Listener) (*Listener, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("evloop: %T is not a socket", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	cerr := rc.Control(func(s uintptr) {
		fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	l := &Listener{fd: fd, addr: ln.Addr()}
	if err := unix.SetNonblock(fd, true); err != nil {
		l.Close()
		return nil, os.NewSyscallError("fcntl", err)
	}
	ln.Close() // the duplicate keeps the socket listening
	return l, nil
}

// FD is the socket, for Poller.Add.
func (l *Listener) FD() int { return l.fd }

// Addr is the address listened on.
func (l *Listener) Addr() net.Addr { return l.addr }

// Close closes the socket. Call it once no loop accepts any more.
func (l *Listener) Close() error {
	if l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd)
	l.fd = -1
	return os.NewSyscallError("close", err)
}

// Accept takes a pending connection, non-blocking and with TCP_NODELAY
// (as Go's net package sets it), and its peer's address. EAGAIN: none is
// pending (another loop took it). It allocates nothing.
func (l *Listener) Accept() (int, netip.AddrPort, error) {
	var sa unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	fd, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(l.fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&n)),
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, netip.AddrPort{}, e
	}
	one := int32(1)
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, uintptr(unsafe.Pointer(&one)), 4, 0)
	return int(fd), peer(&sa), nil
}

// peer decodes an accepted connection's address.
func peer(sa *unix.RawSockaddrAny) netip.AddrPort {
	switch sa.Addr.Family {
	case unix.AF_INET:
		a := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), ntohs(a.Port))
	case unix.AF_INET6:
		a := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), ntohs(a.Port))
	}
	return netip.AddrPort{}
}

// ntohs swaps p's bytes: the port of a raw sockaddr is in network byte order.
func ntohs(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}
