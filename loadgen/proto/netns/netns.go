// Package netns opens a protocol's connections from inside another network
// namespace: the load generator stays one process in its own namespace,
// and only the sockets live where the client of a path would (a pod's
// namespace in the CNI lab).
//
// A socket belongs to the network namespace of the thread that created it,
// for its whole life. So Dial locks its goroutine to its OS thread, moves
// that thread into the namespace, lets the wrapped Dialer create the
// connection, and moves the thread back before unlocking it. Everything
// after the dial (reads, writes, the engine) runs on any thread. A thread
// that cannot be moved back is never unlocked, so the Go runtime retires it
// instead of reusing it in the wrong namespace.
package netns

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/proto"
)

// Dir is where `ip netns add` keeps named namespaces.
const Dir = "/var/run/netns"

// Dialer dials Inner's connections from the namespace at File.
type Dialer struct {
	File  string // a namespace file: /var/run/netns/NAME or /proc/PID/ns/net
	Inner proto.Dialer
}

// New checks that the namespace exists and can be entered, and wraps d. A
// plain name means Dir/name. Where d counts its transport connections
// (proto.ConnCounter), so does the wrapper.
func New(ns string, d proto.Dialer) (proto.Dialer, error) {
	file := ns
	if len(ns) > 0 && ns[0] != '/' {
		file = Dir + "/" + ns
	}
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w (create it with ip netns add, as root)", ns, err)
	}
	unix.Close(fd)
	w := &Dialer{File: file, Inner: d}
	if cc, ok := d.(proto.ConnCounter); ok {
		return counting{w, cc}, nil
	}
	return w, nil
}

type counting struct {
	*Dialer
	proto.ConnCounter
}

// Dial opens one connection of Inner from inside the namespace.
func (d *Dialer) Dial(ctx context.Context) (proto.Conn, error) {
	var conn proto.Conn
	err := Do(d.File, func() error {
		var err error
		conn, err = d.Inner.Dial(ctx)
		return err
	})
	return conn, err
}

// Do runs f on a thread inside the namespace at file. Sockets f creates
// stay in that namespace; f must not start goroutines that create sockets.
func Do(file string, f func() error) error {
	target, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network namespace %s: %w", file, err)
	}
	defer unix.Close(target)
	runtime.LockOSThread()
	self := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	home, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("network namespace of this thread: %w", err)
	}
	defer unix.Close(home)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace %s: %w (needs root)", file, err)
	}
	ferr := f()
	if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
		// Stay locked: only this goroutine goes on using the thread, and
		// when it ends the runtime retires the thread instead of handing
		// it, in the wrong namespace, to another goroutine.
		return fmt.Errorf("leave network namespace %s: %w", file, err)
	}
	runtime.UnlockOSThread()
	return ferr
}
