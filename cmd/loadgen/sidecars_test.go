package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test needs root (network namespaces, iptables): CI runs as root")
		}
		t.Skip("needs root: network namespaces, iptables")
	}
}

// A sweep through local sidecars from flags: the baseline through the same
// kind of pods without a sidecar, nginx on both sides with mTLS, and an
// Envoy path that cannot start here (no binary): its steps fail with the
// reason, the others are measured with the proxies' CPU, and nothing is
// left behind — no namespace, no capture rule on the host.
func TestSweepThroughSidecars(t *testing.T) {
	needRoot(t)
	needNginx(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, stderr := cli(t, "sweep", "-q", "--path", "baseline=sidecar:none", "--path", "nginx=sidecar:nginx,mode=both,mtls,workers=1",
		"--path", "envoy=sidecar:envoy,mode=serveronly", "--ladder", "c2t2", "--payloads", "100", "-d", "1s", "-o", dir)
	if code != exitFail || !strings.Contains(out, "sweep: 1 of 3 steps failed: envoy_c2t2_100B_closed_r1") {
		t.Fatalf("exit %d, want 1 naming the envoy step:\n%s%s", code, out, stderr)
	}
	for _, path := range []string{"baseline", "nginx"} {
		st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, path+"_c2t2_100B_closed_r1.json"))
		if err != nil || st.Run == nil {
			t.Fatalf("%s: %v %+v", path, err, st)
		}
		s := st.Run.Summary
		if s.Requests < 100 || s.Errors.Total() != 0 || st.Run.Config.NetNS == "" {
			t.Errorf("%s: %d requests, errors %+v, netns %q", path, s.Requests, s.Errors, st.Run.Config.NetNS)
		}
		if path == "nginx" && (len(st.Watched) != 1 || st.Watched[0].Name != "nginx" || st.Watched[0].CPUSeconds <= 0) {
			t.Errorf("nginx's sidecars were not watched: %+v", st.Watched)
		}
		if path == "nginx" && st.Workers != 1 {
			t.Errorf("nginx's sidecars ran workers=1, the step records %d", st.Workers)
		}
	}
	st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "envoy_c2t2_100B_closed_r1.json"))
	if err != nil || st.Run != nil || !strings.Contains(st.Failed, "envoy") {
		t.Errorf("envoy step: %v %+v", err, st)
	}
	// Other packages' tests make namespaces of their own meanwhile: only
	// the ones this process's sidecar paths are named after count.
	ours := fmt.Sprintf("lg%dp", os.Getpid())
	list, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(list), "\n") {
		if strings.HasPrefix(line, ours) {
			t.Errorf("namespace left behind: %s", line)
		}
	}
	if nat, _ := exec.Command("iptables-save", "-t", "nat").Output(); strings.Contains(string(nat), "ISTIO") {
		t.Errorf("capture rules on the host:\n%s", nat)
	}
}

// A sidecar killed mid-sweep: the steps after its death fail with the
// proxy's own words, the sweep goes on to the end and exits 1, and neither
// a process nor a namespace is left.
func TestSweepSidecarDies(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("haproxy"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI installs haproxy")
		}
		t.Skip("needs haproxy")
	}
	dir := filepath.Join(t.TempDir(), "s")
	cmd, out, stderr := cliProcess(t, "sweep", "-q", "--path", "haproxy=sidecar:haproxy,mode=serveronly",
		"--ladder", "c1t1,c2t2,c4t4", "--payloads", "100", "-d", "1s", "-o", dir)
	waitSteps(t, dir, 1)
	pod := fmt.Sprintf("/var/run/netns/lg%dp0s", cmd.Process.Pid)
	killed := killIn(t, pod, "haproxy")
	if killed == 0 {
		t.Fatalf("no haproxy found in %s", pod)
	}
	if code := exitCode(cmd.Wait()); code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out.String(), "haproxy died") {
		t.Errorf("no step says the sidecar died:\n%s", out)
	}
	if st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, "haproxy_c4t4_100B_closed_r1.json")); err != nil || !strings.Contains(st.Failed, "died") {
		t.Errorf("the last step: %v %+v", err, st)
	}
	list, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(list), fmt.Sprintf("lg%dp", cmd.Process.Pid)) {
		t.Errorf("namespaces left behind:\n%s", list)
	}
}

// killIn SIGKILLs every process named name whose network namespace is
// the one at nsFile, and says how many.
func killIn(t *testing.T, nsFile, name string) int {
	t.Helper()
	var want syscall.Stat_t
	if err := syscall.Stat(nsFile, &want); err != nil {
		t.Fatalf("%s: %v", nsFile, err)
	}
	pids, _ := exec.Command("pgrep", "-x", name).Output()
	n := 0
	for _, f := range strings.Fields(string(pids)) {
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+f+"/ns/net", &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			if pid, err := strconv.Atoi(f); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}
