package leftover

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseNames(t *testing.T) {
	for name, want := range map[string]int{
		"lg123-vxlan-node1": 123,     // a lab
		"lg123-probe4":      123,     // a lab's probe
		"lgprobe55-3":       55,      // an older build's probe
		"lg4194304p12c":     4194304, // a sweep's sidecar pod
		"lgt11777-udp-n1":   11777,   // a test's
		"lgt11777scc":       11777,
		"lab-pod1":          0,
		"lgx":               0,
		"lgt":               0,
		"lg12":              0,
		"cni-1234":          0,
	} {
		pid, test, ok := ParseNamespace(name)
		if pid != want || ok != (want > 0) || test != (want > 0 && strings.HasPrefix(name, "lgt")) {
			t.Errorf("ParseNamespace(%q) = %d, %v, %v; want %d", name, pid, test, ok, want)
		}
	}
	for name, want := range map[string]int{
		"loadgen-nginx-123-456789":  123,
		"loadgen-haproxy-9-1":       9,
		"loadgen-nginx-3471117261":  0, // an older build's: no pid
		"loadgen-nginx-x-1":         0,
		"loadgen-check-123":         0,
		"other-nginx-123-456":       0,
		"loadgen-Nginx-123-456":     0,
		"loadgen-nginx-123-456.tmp": 0,
	} {
		if pid, ok := ParseDir(name); pid != want || ok != (want > 0) {
			t.Errorf("ParseDir(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
	dir, err := TempDir("nginx")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dir)
	if pid, ok := ParseDir(filepath.Base(dir)); !ok || pid != os.Getpid() {
		t.Errorf("TempDir made %s: ParseDir says %d, %v", dir, pid, ok)
	}
	if pid, _, ok := ParseNamespace(Name("p0")); !ok || pid != os.Getpid() {
		t.Errorf("Name made %s: ParseNamespace says %d, %v", Name("p0"), pid, ok)
	}
}

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

// otherProgram is a running process that is not loadgen (sleep), killed
// when the test ends.
func otherProgram(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "nginx.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// The temporary directories of a dead process, and of a pid that is now
// another program, are removed; this running process's, and a directory
// an older build named without a pid, stay.
func TestCleanTemporaryDirectories(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := mkdir(t, filepath.Join(tmp, fmt.Sprintf("loadgen-haproxy-%d-1", deadPID(t))))
	other := mkdir(t, filepath.Join(tmp, fmt.Sprintf("loadgen-nginx-%d-2", otherProgram(t))))
	ours, err := TempDir("nginx")
	if err != nil {
		t.Fatal(err)
	}
	old := mkdir(t, filepath.Join(tmp, "loadgen-nginx-3471117261"))
	found, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range found {
		if it.Kind == Dir {
			names = append(names, it.Name)
		}
	}
	slices.Sort(names)
	if want := []string{dead, other}; !slices.Equal(names, want) && !slices.Equal(names, []string{other, dead}) {
		t.Errorf("Find: %v, want %v", names, want)
	}
	removed, err := Clean(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dead, other} {
		if exists(p) {
			t.Errorf("%s of a gone process is still there (removed %v)", p, removed)
		}
	}
	for _, p := range []string{ours, old} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if s := Summary(removed); !strings.Contains(s, "temporary directories of killed loadgen runs (pids ") {
		t.Errorf("Summary: %q", s)
	}
}

// A network namespace of a dead process, and of a pid that is now another
// program, are deleted; this process's stays.
func TestCleanNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test needs root (network namespaces): CI runs the tests as root")
		}
		t.Skip("needs root: network namespaces")
	}
	t.Setenv("TMPDIR", t.TempDir()) // this test's directories only
	add := func(ns string) string {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		return ns
	}
	dead := add(fmt.Sprintf("lg%d-t", deadPID(t)))
	deadTest := add(fmt.Sprintf("lgt%d-t", deadPID(t)))
	other := add(fmt.Sprintf("lg%dp0c", otherProgram(t)))
	ours := add(Name("-tlive"))
	removed, err := Clean(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{dead, deadTest, other} {
		if exists(filepath.Join(NetnsDir, ns)) {
			t.Errorf("namespace %s of a gone process is still there (removed %v)", ns, removed)
		}
	}
	if !exists(filepath.Join(NetnsDir, ours)) {
		t.Errorf("namespace %s of this running process was deleted", ours)
	}
}
