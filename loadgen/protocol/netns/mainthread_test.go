//go:build linux

package netns

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The main goroutine keeps the main thread through init and TestMain, so
// that the child of TestHomeWhileMainThreadAway can move that thread into
// another namespace and hold it there, as a goroutine that launches a
// proxy in a pod's namespace does.
func init() { runtime.LockOSThread() }

const mainThreadEnv = "LOADGEN_NETNS_MAIN_THREAD_IN"

var startNS, _ = os.Readlink("/proc/thread-self/ns/net")

func TestMain(m *testing.M) {
	if ns := os.Getenv(mainThreadEnv); ns != "" {
		os.Exit(mainThreadAway(ns))
	}
	os.Exit(m.Run())
}

// mainThreadAway moves the main thread into ns, then opens ns and runs Do
// on another thread: that thread must come back to the namespace the
// process started in, not to the main thread's.
func mainThreadAway(ns string) int {
	fd, err := unix.Open(Dir+"/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Setns(fd, unix.CLONE_NEWNET)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "enter", ns, err)
		return 2
	}
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		n, err := Open(ns)
		if err != nil {
			done <- err.Error()
			return
		}
		defer n.Close()
		n.Do(func() error { return nil })
		after, _ := os.Readlink("/proc/thread-self/ns/net")
		done <- after
	}()
	if after := <-done; after != startNS {
		fmt.Fprintf(os.Stderr, "after Do the thread is in %s; the process started in %s\n", after, startNS)
		return 1
	}
	return 0
}

func TestHomeWhileMainThreadAway(t *testing.T) {
	ns := newNamespace(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainThreadEnv+"="+ns)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}
