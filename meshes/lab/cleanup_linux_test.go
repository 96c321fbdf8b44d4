//go:build linux

package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// Every namespace loadgen or its tests make is named after the process
// that made it, so that --cleanup (and a test run starting) can tell the
// ones of dead processes: labs, the sweep's sidecar pods, the tests' own.
func TestStalePID(t *testing.T) {
	for name, want := range map[string]int{
		"lg123-vxlan-n1":  123,     // a lab, default prefix
		"lgprobe55-3":     55,      // Available's probe
		"lg4194304p12c":   4194304, // a sweep's sidecar pod
		"lgt11777-udp-n1": 11777,   // lab tests
		"lgt11777f-a":     11777,
		"lgt11777scc":     11777, // meshes/sidecar's tests
		"lgt11777ns":      11777, // loadgen/protocol/netns's test
		"lab-pod1":        0,
		"lgx":             0,
		"lgt":             0,
		"lg12p":           0,
		"cni-1234":        0,
	} {
		if got, _ := stalePID(name); got != want {
			t.Errorf("stalePID(%q) = %d, want %d", name, got, want)
		}
	}
}

// A test run killed midway (make test, Ctrl-C) leaves namespaces named
// lgtPID… (and sidecar pods lgPIDpN…); CleanupStaleTests, which every test
// binary that makes namespaces calls as it starts, removes them once PID
// is gone, and leaves those of a running process.
func TestCleanupStaleRemovesTestNamespaces(t *testing.T) {
	requireLab(t, Config{})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := []string{fmt.Sprintf("lgt%d-udp-n1", dead.Process.Pid), fmt.Sprintf("lgt%dscc", dead.Process.Pid), fmt.Sprintf("lg%dp0s", dead.Process.Pid)}
	live := fmt.Sprintf("lgt%d-live", os.Getpid())
	add := func(ns string) {
		if _, err := run(context.Background(), "ip", "netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteNS(context.Background(), ns) })
	}
	add(live)
	// loadgen lab --cleanup's, then the one a test binary calls as it
	// starts. Another package's test binary, starting meanwhile, may take
	// them first: what counts is that they are gone.
	for _, cleanup := range []func() ([]string, error){CleanupStale, CleanupStaleTests} {
		for _, ns := range stale {
			add(ns)
		}
		removed, err := cleanup()
		if err != nil {
			t.Fatal(err)
		}
		names, err := listNS(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range stale {
			if slices.Contains(names, ns) {
				t.Errorf("%s of a dead process: removed %v, left %v", ns, removed, names)
			}
		}
		if !slices.Contains(names, live) {
			t.Errorf("%s of this running process was removed", live)
		}
	}
}
