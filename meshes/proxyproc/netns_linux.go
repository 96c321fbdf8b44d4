//go:build linux

package proxyproc

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// NetNSDir is where `ip netns add` keeps named namespaces.
const NetNSDir = "/var/run/netns"

// enter moves the calling thread into the named network namespace. The
// caller has locked its goroutine to the thread.
func enter(ns string) error {
	fd, err := unix.Open(NetNSDir+"/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network namespace %s: %w", ns, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace %s: %w (needs root)", ns, err)
	}
	return nil
}

// In runs f on a thread inside the named network namespace (this
// process's own when ns is empty): the sockets f creates, listeners
// included, live there for good. The thread goes back to this process's
// namespace afterwards; one that cannot is retired, never reused.
func In(ns string, f func() error) error {
	if ns == "" {
		return f()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer unix.Close(home)
		if err := enter(ns); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		ferr := f()
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leave network namespace %s: %w", ns, err)
			return // still locked: the runtime retires the thread
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// DialContext dials a TCP address from inside the named network namespace
// (this process's own when ns is empty).
func DialContext(ctx context.Context, ns, addr string) (net.Conn, error) {
	var c net.Conn
	err := In(ns, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

// Reachable reports whether a TCP connection to addr, from inside ns,
// succeeds within 100ms.
func Reachable(ns, addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c, err := DialContext(ctx, ns, addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
