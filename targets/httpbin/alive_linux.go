//go:build linux

package httpbin

import (
	"net"
	"syscall"
)

// peerOpen reports whether the client of c is still connected, without
// consuming anything: a non-blocking MSG_PEEK sees EOF or a reset. Bytes
// waiting (a pipelined request) count as open.
func peerOpen(c net.Conn) bool {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err != nil:
			open = false // reset
		case n == 0:
			open = false // EOF
		}
		return true
	})
	return err == nil && open
}
