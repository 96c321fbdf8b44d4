package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"loadgen/meshes/lab"
	"loadgen/results/store"
)

// `loadgen lab`: netperf's three measures over lab paths in network
// namespaces, the load sent from the client pod's namespace.
func TestLab(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a network namespace lab; not with -short")
	}
	if err := lab.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the lab must run in CI (root, iproute2, iptables): %v", err)
		}
		t.Skip(err)
	}
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // the lab runs this binary as `loadgen serve tcp` in the server namespaces
	dir := filepath.Join(t.TempDir(), "lab")
	paths := []string{"loopback", "pod-pod-vxlan", "pod-service"}
	code, out, stderr := cli(t, "lab", "--paths", strings.Join(paths, ","), "-d", "500ms", "--warmup", "100ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, p := range paths {
		// path, Gbit/s, TCP_RR us (rung), TCP_CRR us (rung)
		re := regexp.MustCompile(`(?m)^\s*` + p + `\s+\d+\.\d\d\s+\d+\.\d \(c1t1\)\s+\d+\.\d \(c1t1\)\s*$`)
		if !re.MatchString(out) {
			t.Errorf("no CNI matrix row with every figure for %s:\n%s", p, out)
		}
	}
	for _, proto := range []string{"tcp-rr", "tcp-crr", "tcp-stream"} {
		_, steps, err := store.ReadSweep(filepath.Join(dir, proto))
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != len(paths) {
			t.Fatalf("%s: %d steps, want %d", proto, len(steps), len(paths))
		}
		for _, st := range steps {
			if st.Run == nil {
				t.Fatalf("%s %s failed: %s", proto, st.Path, st.Failed)
			}
			s := st.Run.Summary
			if s.Requests == 0 || s.Errors.Total() != 0 || st.Run.Config.NetNS == "" {
				t.Errorf("%s %s: %d requests, errors %+v, netns %q", proto, st.Path, s.Requests, s.Errors, st.Run.Config.NetNS)
			}
		}
	}
	code, md, stderr := cli(t, "report", dir)
	if code != 0 || !strings.Contains(md, "## CNI path matrix") || !strings.Contains(md, "| pod-pod-vxlan |") {
		t.Errorf("report: exit %d, no CNI matrix\n%s\n%s", code, md, stderr)
	}

	// CI checks over a lab run: the baseline is the earlier lab's sweep of
	// the same protocol, and each protocol writes its own JUnit file.
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, stderr = cli(t, "lab", "--paths", "loopback", "--protocols", "tcp-rr,tcp-stream", "-d", "300ms", "--warmup", "100ms",
		"-o", filepath.Join(t.TempDir(), "again"), "-q", "--baseline", dir, "--max-regression", "10000%", "--junit", junit, "--assert", "errors<1%")
	if code != 0 || strings.Count(out, "assertions: all 1 held") != 2 {
		t.Fatalf("lab with checks: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, proto := range []string{"tcp-rr", "tcp-stream"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(junit), "junit-"+proto+".xml"))
		if err != nil || !strings.Contains(string(b), "errors&lt;1%") || !strings.Contains(string(b), "baseline") {
			t.Errorf("junit-%s.xml: %v\n%s", proto, err, b)
		}
	}
}

func TestLabBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--protocols", "udp-rr"}, {"--protocols", ","}, {"--ladder", "c1t2"}, {"--size", "-1"}, {"--size", "0"}, {"-d", "0s"}, {"--resume"}, {"--paths", "loopback,pod-pod-wireguard"},
	} {
		code, _, stderr := cli(t, append([]string{"lab"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("lab %v: exit %d, want 2 with a short message:\n%s", args, code, stderr)
		}
	}
}
