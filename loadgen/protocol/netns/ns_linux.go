package netns

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

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
