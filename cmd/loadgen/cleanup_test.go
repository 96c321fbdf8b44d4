package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"loadgen/meshes/leftover"
)

// deadPID is the pid of a process that has certainly ended: started,
// waited for and reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// leftovers makes, in a temporary directory that TMPDIR names for the
// test, what a killed run of a dead process leaves: a temporary directory
// and (as root) a network namespace; and the same of this running process.
func leftovers(t *testing.T) (deadDir, deadNS, liveDir, liveNS string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pid := deadPID(t)
	deadDir = filepath.Join(tmp, fmt.Sprintf("loadgen-haproxy-%d-123", pid))
	if err := os.MkdirAll(filepath.Join(deadDir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if liveDir, err = leftover.TempDir("nginx"); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		deadNS, liveNS = fmt.Sprintf("lg%dp0c", pid), leftover.Name(fmt.Sprintf("-live%d", liveNamespaces.Add(1)))
		for _, ns := range []string{deadNS, liveNS} {
			if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
				t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
			}
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		}
	}
	return deadDir, deadNS, liveDir, liveNS
}

// liveNamespaces numbers this process's test namespaces.
var liveNamespaces atomic.Int64

func gone(path string) bool { _, err := os.Lstat(path); return os.IsNotExist(err) }

func nsFile(ns string) string { return filepath.Join(leftover.NetnsDir, ns) }

// loadgen cleanup --dry-run lists what a dead process left and removes
// nothing; loadgen cleanup removes it and says so; what this running
// process made stays. lab --cleanup, its old name, does the same.
func TestCleanupCommand(t *testing.T) {
	for _, args := range [][]string{{"cleanup"}, {"lab", "--cleanup"}} {
		deadDir, deadNS, liveDir, liveNS := leftovers(t)
		code, out, stderr := cli(t, append(args, "--dry-run")...)
		if code != exitOK || !strings.Contains(out, "would remove temporary directory "+deadDir+" (pid ") ||
			!strings.Contains(out, "dry run: nothing was removed") || gone(deadDir) {
			t.Fatalf("%v --dry-run: exit %d\n%s%s", args, code, out, stderr)
		}
		if deadNS != "" && (!strings.Contains(out, "would remove network namespace "+deadNS) || gone(nsFile(deadNS))) {
			t.Errorf("%v --dry-run: the namespace %s:\n%s", args, deadNS, out)
		}
		code, out, stderr = cli(t, args...)
		if code != exitOK || !strings.Contains(out, "removed temporary directory "+deadDir) || !gone(deadDir) {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
		if deadNS != "" && (!strings.Contains(out, "removed network namespace "+deadNS) || !gone(nsFile(deadNS))) {
			t.Errorf("%v: the namespace %s of a dead process:\n%s", args, deadNS, out)
		}
		if gone(liveDir) || (liveNS != "" && gone(nsFile(liveNS))) {
			t.Errorf("%v removed this running process's %s %s:\n%s", args, liveDir, liveNS, out)
		}
		if strings.Contains(out, liveDir) || (liveNS != "" && strings.Contains(out, liveNS)) {
			t.Errorf("%v lists this running process's leftovers:\n%s", args, out)
		}
	}
}

// A sweep removes what killed runs left as it starts, and says so in one
// line on stderr; a dry run removes nothing.
func TestSweepCleansLeftoversAtStart(t *testing.T) {
	url := startHTTPBin(t)
	deadDir, deadNS, liveDir, liveNS := leftovers(t)
	pid := strings.Split(filepath.Base(deadDir), "-")[2]
	args := append(sweepArgs(url, filepath.Join(t.TempDir(), "s")), "--ladder", "c1t1", "--payloads", "100", "-d", "100ms")
	code, _, stderr := cli(t, append(args, "--dry-run")...)
	if code != exitOK || gone(deadDir) {
		t.Fatalf("a dry run: exit %d, removed %s: %s", code, deadDir, stderr)
	}
	code, _, stderr = cli(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !gone(deadDir) || (deadNS != "" && !gone(nsFile(deadNS))) {
		t.Errorf("the sweep left %s %s of a dead process:\n%s", deadDir, deadNS, stderr)
	}
	if gone(liveDir) || (liveNS != "" && gone(nsFile(liveNS))) {
		t.Errorf("the sweep removed this running process's %s %s", liveDir, liveNS)
	}
	var line string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "loadgen: removed ") {
			line = l
		}
	}
	if !strings.Contains(line, "1 temporary directory of killed loadgen runs (pid") || !strings.Contains(line, pid) {
		t.Errorf("stderr does not say in a line what was removed (pid %s):\n%s", pid, stderr)
	}
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatal(err)
	}
}
