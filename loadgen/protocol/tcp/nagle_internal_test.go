package tcp

import (
	"context"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// tcp-stream's sockets keep Nagle's algorithm, as netperf's TCP_STREAM
// and iperf3 do unless asked; tcp-rr's turn it off (TCP_NODELAY), as
// request/response clients do. Read off the real sockets of both
// drivers: the event loop's (Socket) and the goroutines' (Dial).
func TestStreamKeepsNagle(t *testing.T) {
	s := echoServer(t)
	for _, c := range []struct {
		mode        Mode
		wantNoDelay int
	}{{Stream, 0}, {RR, 1}} {
		d, err := NewDialer(Config{Addr: s.Addr(), Mode: c.mode, Size: DefaultSize})
		if err != nil {
			t.Fatal(err)
		}
		fd, err := d.Socket()
		if err != nil {
			t.Fatal(err)
		}
		got, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.wantNoDelay {
			t.Errorf("%s, event loop's socket: TCP_NODELAY %d, want %d", c.mode, got, c.wantNoDelay)
		}
		conn, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var nc net.Conn
		switch x := conn.(type) {
		case *streamConn:
			nc = x.c
		case *rrConn:
			nc = x.c
		default:
			t.Fatalf("%s: Dial gave %T", c.mode, conn)
		}
		raw, err := nc.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var gerr error
		raw.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) })
		conn.Close()
		if gerr != nil {
			t.Fatal(gerr)
		}
		if got != c.wantNoDelay {
			t.Errorf("%s, goroutine driver's connection: TCP_NODELAY %d, want %d", c.mode, got, c.wantNoDelay)
		}
	}
}
