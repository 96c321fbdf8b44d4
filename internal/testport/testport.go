// Package testport gives tests loopback ports that stay theirs while the
// test runs, where a picked port released before use could be taken by
// another package's test binary running at the same time.
//
// Both hold a TCP socket bound to 127.0.0.1 that never listens, until the
// test ends. The kernel never gives a bound port to another socket that
// asks for port 0, so no other test can be handed it. A connection to a
// bound socket that does not listen is refused (RST) on Linux.
package testport

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// Closed returns a loopback address that refuses connections until the
// test ends: its socket is bound without SO_REUSEADDR, so nothing else can
// bind the port, let alone listen on it.
func Closed(t testing.TB) string {
	t.Helper()
	return bind(t, false)
}

// Held returns a loopback address for a command that binds it itself (a
// server given --addr, Prometheus given its listen address). Its socket
// is bound with SO_REUSEADDR: Linux lets another socket with SO_REUSEADDR
// (every Go listener, Prometheus's too) bind and listen on the same
// address while it is not listening, and refuses everyone else.
func Held(t testing.TB) string {
	t.Helper()
	return bind(t, true)
}

func bind(t testing.TB, reuse bool) string {
	t.Helper()
	syscall.ForkLock.RLock() // no exec between the socket and its close-on-exec flag
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("testport: socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if reuse {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			t.Fatalf("testport: SO_REUSEADDR: %v", err)
		}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("testport: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("testport: getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
