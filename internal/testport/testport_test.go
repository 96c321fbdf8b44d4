package testport

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// A closed port refuses connections and no one can listen on it while the
// test runs, on its address or on every address.
func TestClosed(t *testing.T) {
	addr := Closed(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	_, port, _ := net.SplitHostPort(addr)
	for _, a := range []string{addr, ":" + port} {
		if ln, err := net.Listen("tcp", a); !errors.Is(err, syscall.EADDRINUSE) {
			if err == nil {
				ln.Close()
			}
			t.Errorf("listen on %s: %v, want address in use", a, err)
		}
	}
}

// A held port refuses connections until the command it is for listens on
// it; a socket without SO_REUSEADDR cannot take it meanwhile, nor can a
// second listener once the first listens.
func TestHeld(t *testing.T) {
	addr := Held(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s before it listens: %v, want connection refused", addr, err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: tcp.Port, Addr: [4]byte{127, 0, 0, 1}}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("a bind without SO_REUSEADDR took the held port: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the command cannot listen on the held %s: %v", addr, err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial the listener on %s: %v", addr, err)
	}
	c.Close()
	if ln2, err := net.Listen("tcp", addr); err == nil {
		ln2.Close()
		t.Error("a second listener took the held port")
	}
}
