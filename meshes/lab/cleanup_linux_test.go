//go:build linux

package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"loadgen/meshes/leftover"
)

// holdEnv tells TestHelperHold, run by ownerProcess, to hold on.
const holdEnv = "LAB_TEST_HOLD"

// TestHelperHold is not a test: it is a process of this test binary (a
// loadgen-like program, lab.test) that lives until its stdin is closed,
// for leftovers named after a process that runs, then is gone.
func TestHelperHold(t *testing.T) {
	if os.Getenv(holdEnv) == "" {
		return
	}
	var b [1]byte
	os.Stdin.Read(b[:])
}

// ownerProcess starts a process that leftovers can be named after, alive
// (so that no cleanup takes them meanwhile) until end is called, which
// ends and reaps it: then it is gone.
func ownerProcess(t *testing.T) (pid int, end func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe, "-test.run=^TestHelperHold$", "-test.count=1")
	c.Env = append(os.Environ(), holdEnv+"=1")
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	end = func() {
		if !done {
			done = true
			in.Close()
			c.Wait()
		}
	}
	t.Cleanup(end)
	return c.Process.Pid, end
}

// A test run killed midway (make test, Ctrl-C) leaves namespaces named
// lgtPID… (and sidecar pods lgPIDpN…); CleanupStaleTests, which every test
// binary that makes namespaces calls as it starts, removes the tests'
// once PID is gone and leaves those of a running process; loadgen cleanup
// (leftover.Clean) removes them all.
func TestCleanupStaleRemovesTestNamespaces(t *testing.T) {
	requireLab(t, Config{})
	add := func(ns string) {
		if _, err := run(context.Background(), "ip", "netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteNS(context.Background(), ns) })
	}
	live := fmt.Sprintf("lgt%d-live", os.Getpid())
	add(live)
	for _, c := range []struct {
		name    string
		cleanup func() ([]string, error)
		sweeps  bool // takes a sweep's namespaces too
	}{{"CleanupStaleTests", CleanupStaleTests, false}, {"leftover.Clean", cleanAll, true}} {
		pid, end := ownerProcess(t)
		tests := []string{fmt.Sprintf("lgt%d-udp-n1", pid), fmt.Sprintf("lgt%dscc", pid)}
		sweep := fmt.Sprintf("lg%dp0s", pid)
		for _, ns := range append(tests, sweep) {
			add(ns)
		}
		end() // now gone
		removed, err := c.cleanup()
		if err != nil {
			t.Fatal(err)
		}
		names, err := listNS(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range tests {
			if slices.Contains(names, ns) {
				t.Errorf("%s: %s of a dead process is left (removed %v)", c.name, ns, removed)
			}
		}
		if slices.Contains(names, sweep) == c.sweeps {
			t.Errorf("%s: %s of a dead sweep: removed %v, left %v", c.name, sweep, removed, names)
		}
		if !slices.Contains(names, live) {
			t.Errorf("%s: %s of this running process was removed", c.name, live)
		}
		deleteNS(context.Background(), sweep)
	}
}

// cleanAll is loadgen cleanup's: every leftover of a dead process.
func cleanAll() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	removed, err := leftover.Clean(ctx, nil)
	var names []string
	for _, it := range removed {
		names = append(names, it.Name)
	}
	return names, err
}
