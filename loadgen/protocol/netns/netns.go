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
	"runtime"

	"golang.org/x/sys/unix"

	"loadgen/loadgen/protocol"
)

// Dir is where `ip netns add` keeps named namespaces.
const Dir = "/var/run/netns"

// NS is an open network namespace, and the process's own to come back to.
type NS struct {
	file         string
	target, home int
}

// Open opens a namespace: a name under Dir, or a file such as
// /proc/PID/ns/net. Close it when done.
func Open(ns string) (*NS, error) {
	file := ns
	if len(ns) > 0 && ns[0] != '/' {
		file = Dir + "/" + ns
	}
	target, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("network namespace %s: %w (create it with ip netns add, as root)", ns, err)
	}
	if homeErr != nil {
		unix.Close(target)
		return nil, fmt.Errorf("this process's network namespace: %w", homeErr)
	}
	return &NS{file: file, target: target, home: home}, nil
}

// home is the namespace the process started in, the one every unlocked
// thread lives in, opened while only the main goroutine runs. Not
// /proc/self/ns/net when Open is called: that is the main thread's, and
// the main thread may be held in another namespace by then (a goroutine
// that launches a proxy inside a pod's namespace keeps its thread there
// while the proxy lives), and Do would "come back" to the pod.
var home, homeErr = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)

// Close releases the namespace's file descriptor.
func (n *NS) Close() error {
	return unix.Close(n.target)
}

// Do runs f on a thread inside the namespace: the sockets f creates stay
// in it. f must not leave the sockets' creation to other goroutines. Two
// setns calls per Do, nothing else: cheap enough to wrap a connect per
// request (tcp-crr).
func (n *NS) Do(f func() error) error {
	runtime.LockOSThread()
	if err := unix.Setns(n.target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace %s: %w (needs root)", n.file, err)
	}
	ferr := f()
	if err := unix.Setns(n.home, unix.CLONE_NEWNET); err != nil {
		// Stay locked: only this goroutine goes on using the thread, and
		// when it ends the runtime retires the thread instead of handing
		// it, in the wrong namespace, to another goroutine.
		return fmt.Errorf("leave network namespace %s: %w", n.file, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Dialer dials Inner's connections from inside NS.
type Dialer struct {
	NS    *NS
	Inner protocol.Dialer
}

// Wrap makes d dial from inside ns; the wrapper owns ns (Close closes it).
// Where d counts its transport connections (protocol.ConnCounter), so does
// the wrapper.
func Wrap(ns *NS, d protocol.Dialer) protocol.Dialer {
	w := &Dialer{NS: ns, Inner: d}
	if cc, ok := d.(protocol.ConnCounter); ok {
		return counting{w, cc}
	}
	return w
}

type counting struct {
	*Dialer
	protocol.ConnCounter
}

// Dial opens one connection of Inner from inside the namespace.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	var conn protocol.Conn
	err := d.NS.Do(func() error {
		var err error
		conn, err = d.Inner.Dial(ctx)
		return err
	})
	return conn, err
}

// Sessions, Socket, Session and PerRequest make the wrapper drivable by an
// event loop when Inner is: sockets are created inside the namespace.
func (d *Dialer) Sessions() bool {
	sd, ok := d.Inner.(protocol.SessionDialer)
	return ok && sd.Sessions()
}

func (d *Dialer) Socket() (fd int, err error) {
	err = d.NS.Do(func() error {
		fd, err = d.Inner.(protocol.SessionDialer).Socket()
		return err
	})
	return fd, err
}

func (d *Dialer) Session() protocol.Session { return d.Inner.(protocol.SessionDialer).Session() }

func (d *Dialer) PerRequest() bool { return d.Inner.(protocol.SessionDialer).PerRequest() }

// Close closes the namespace (the engine calls it when the run ends).
func (d *Dialer) Close() error { return d.NS.Close() }
