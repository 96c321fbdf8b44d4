package loadgen_test

import (
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fullTarget accepts one connection (the preflight's) and then none, on a
// listen backlog of 1: once its accept queue is full the kernel drops
// every SYN, and a connect hangs until it times out.
func fullTarget(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "full-target")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// A tcp-crr connect that runs out of the request's timeout is a connect
// error on either driver (the event loop always said so; goroutines called
// it a timeout), and a request that connected but got no answer is a
// timeout.
func TestCRRConnectTimeoutIsAConnectError(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		addr := fullTarget(t)
		s := runCRRTimeout(t, addr, 2, 200*time.Millisecond)
		if s.Errors.Connect < 2 || s.Requests != 0 {
			t.Errorf("%d answered, errors %+v: want connects that timed out counted as connect errors", s.Requests, s.Errors)
		}
		if s.Errors.Timeout > 2 {
			t.Errorf("errors %+v: only the requests the full queue took (at most 2) can time out", s.Errors)
		}
	})
}
