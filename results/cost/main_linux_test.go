package cost

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child processes the tests measure: run
// with childEnv set, TestMain becomes that child instead of running tests.
const childEnv = "LOADGEN_COST_TEST_CHILD"

// childLife bounds every child: it exits on its own after this long even if
// the test that started it never kills it.
const childLife = 60 * time.Second

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		runChild(mode)
		return
	}
	os.Exit(m.Run())
}

// runChild is a child process: it prints "ready" once it is in the state
// its mode names, and exits after childLife.
//
//	spin   one core busy
//	mem    100 MiB mapped and touched, then idle
//	sleep  idle
//	tree   idle, with two idle children of its own
func runChild(mode string) {
	deadline := time.Now().Add(childLife)
	var keep []byte
	switch mode {
	case "spin":
		fmt.Println("ready")
		for n := 0; time.Now().Before(deadline); n++ {
			for i := 0; i < 1_000_000; i++ {
				n ^= i
			}
		}
		return
	case "mem":
		// Mapped outside the Go heap, so that the race detector's shadow
		// memory does not double it.
		var err error
		keep, err = syscall.Mmap(-1, 0, 100<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		for i := 0; i < len(keep); i += os.Getpagesize() {
			keep[i] = 1
		}
	case "tree":
		for range 2 {
			cmd := childCommand(os.Args[0], "sleep")
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				fmt.Println("error:", err)
				return
			}
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				fmt.Println("error: grandchild said", line)
				return
			}
			defer cmd.Process.Kill()
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Until(deadline))
	runtime.KeepAlive(keep)
}

// childCommand runs the test binary at path as a child in mode. The child
// gets SIGKILL if this process dies first.
func childCommand(path, mode string) *exec.Cmd {
	cmd := exec.Command(path, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// child is a running child process.
type child struct {
	cmd *exec.Cmd
	pid int
}

// kill ends the child and waits for it; its ProcessState then holds the CPU
// it used over its life.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

// cpu is the child's whole-life CPU time, once it has been killed.
func (c *child) cpu() float64 {
	st := c.cmd.ProcessState
	return (st.UserTime() + st.SystemTime()).Seconds()
}

// startChild starts the test binary (or a link to it at path, "" for the
// binary itself) in mode, waits until it is ready, and kills it when the test
// ends.
func startChild(t *testing.T, path, mode string) *child {
	t.Helper()
	if path == "" {
		path = os.Args[0]
	}
	cmd := childCommand(path, mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, pid: cmd.Process.Pid}
	t.Cleanup(c.kill)
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-ready:
		if line != "ready\n" {
			t.Fatalf("child %s: said %q, want ready", mode, line)
		}
	case <-time.After(20 * time.Second): // a bound on a hung child, not a timing assertion
		t.Fatalf("child %s: not ready", mode)
	}
	return c
}

// namedBinary links (or copies) the test binary into a temporary directory
// under name, so that a child started from it has that comm and executable
// basename.
func namedBinary(t *testing.T, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.Link(self, path); err == nil {
		return path
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// uniqueName is a process name no other process has: a prefix (one per
// test) and this process's pid.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, os.Getpid())
}

const mib = 1 << 20
