package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

// startNamed starts this binary as `loadgen serve KIND` under another
// process name (a link called name) and returns its address and pid.
func startNamed(t *testing.T, name, kind string) (string, int) {
	t.Helper()
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(os.Args[0], link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOADGEN_TEST_AS_CLI", "1")
	addr, pid, stop, err := startChild(context.Background(), io.Discard, exec.Command(link, "serve", kind, "--addr", "127.0.0.1:0", "--for", "2m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, pid
}

// A name watch that matches more than the path's own processes (an
// unrelated process of the same name on the host) says so before any load,
// naming the pids that are not the path's: those that do not listen on its
// URL's port.
func TestNameWatchWarnsOfOtherProcesses(t *testing.T) {
	name := fmt.Sprintf("lgw%d", os.Getpid())
	addr, ours := startNamed(t, name, "httpbin")
	_, other := startNamed(t, name, "tcp")
	code, out, stderr := cli(t, "sweep", "--dry-run", "--path", "px=http://"+addr, "--watch", "px=name:"+name, "--ladder", "c1t1", "--payloads", "100")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	text := strings.Join(strings.Fields(stderr), " ")
	if !strings.Contains(text, "watch px (name:"+name+") also matches pid "+strconv.Itoa(other)) {
		t.Errorf("no warning naming pid %d, which does not serve %s:\n%s", other, addr, stderr)
	}
	if !strings.Contains(text, "pid:"+strconv.Itoa(ours)) {
		t.Errorf("the warning does not suggest pid:%d, the one listening:\n%s", ours, stderr)
	}
	if long := longLines(stderr); len(long) > 0 {
		t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
}

// A pid: watch is called by its process's name (/proc/PID/comm), as
// docs/sweep.md says: in the step's results and in cpu.NAME assertions.
func TestPIDWatchIsNamedByProcess(t *testing.T) {
	url := startHTTPBin(t)
	name := fmt.Sprintf("lgp%d", os.Getpid())
	_, pid := startNamed(t, name, "tcp")
	dir := filepath.Join(t.TempDir(), "s")
	code, out, stderr := cli(t, "sweep", "-q", "--path", "baseline="+url, "--watch", "baseline=pid:"+strconv.Itoa(pid),
		"--ladder", "c1t1", "--payloads", "100", "-d", "1200ms", "-o", dir, "--assert", "cpu."+name+"<64")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "baseline_c1t1_100B_closed_r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Watched) != 1 || st.Watched[0].Name != name {
		t.Errorf("watched %+v; want one called %s", st.Watched, name)
	}
}
