package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"loadgen/meshes/lab"
	"loadgen/results/store"
)

// needLab fails in CI, which runs as root with iproute2 and iptables, and
// skips elsewhere when the lab cannot run.
func needLab(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds network namespace labs; not with -short")
	}
	if err := lab.Available(lab.Config{}); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the lab must run in CI (root, iproute2, iptables): %v", err)
		}
		t.Skip(err)
	}
}

// `loadgen lab`: netperf's three measures over lab paths in network
// namespaces, per CNI mode, the load sent from the client's namespace.
func TestLab(t *testing.T) {
	needLab(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // the lab runs this binary as `loadgen serve tcp` and `loadgen lab udp-tunnel`
	dir := filepath.Join(t.TempDir(), "lab")
	paths := []string{"loopback", "pod-pod-other-node", "pod-service-remote"}
	modes := []string{"host-gw", "ebpf", "udp", "macvlan"}
	missing := lab.Available(lab.Config{Mode: lab.IPIP}) != nil
	if missing {
		modes = append(modes, "ipip") // listed as skipped, the others go on
	}
	code, out, stderr := cli(t, "lab", "--modes", strings.Join(modes, ","), "--paths", strings.Join(paths, ","), "-d", "500ms", "--warmup", "100ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// The matrix: a table per metric, a column per mode (and "no CNI" for
	// loopback), a row per path.
	for _, metric := range []string{"TCP_STREAM Gbit/s", "TCP_RR µs", "TCP_CRR µs"} {
		re := regexp.MustCompile(`(?m)^\s*` + metric + `\s+no CNI\s+host-gw\s+ebpf\s+udp\s+macvlan\s*$`)
		if !re.MatchString(out) {
			t.Errorf("no %s table with a column per mode:\n%s", metric, out)
		}
	}
	num := `\d+\.\d+`
	for re, what := range map[string]string{
		`(?m)^\s*pod-pod-other-node\s+–\s+` + num + `\s+` + num + `\s+` + num + `\s+` + num + `\s*$`: "pod-pod-other-node in every mode",
		`(?m)^\s*pod-service-remote\s+–\s+` + num + `\s+` + num + `\s+` + num + `\s+–\s*$`:           "pod-service-remote, not in macvlan",
		`(?m)^\s*loopback\s+` + num + `\s+–\s+–\s+–\s+–\s*$`:                                         "loopback once",
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no matrix row for %s:\n%s", what, out)
		}
	}
	if !strings.Contains(out, "not applicable: macvlan.pod-service-remote: ") {
		t.Errorf("macvlan's Service path is not listed as not applicable:\n%s", out)
	}
	if missing && (!strings.Contains(stderr, "lab: skipped mode ipip: ") || !strings.Contains(out, "skipped mode ipip: ")) {
		t.Errorf("ipip is not on this kernel but not listed as skipped:\n%s\n%s", out, stderr)
	}
	for _, proto := range []string{"tcp-rr", "tcp-crr", "tcp-stream"} {
		_, steps, err := store.ReadSweep(filepath.Join(dir, proto))
		if err != nil {
			t.Fatal(err)
		}
		// loopback, two paths in host-gw, ebpf and udp, one in macvlan.
		if len(steps) != 8 {
			t.Fatalf("%s: %d steps, want 8", proto, len(steps))
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
	if code != 0 || !strings.Contains(md, "## CNI path matrix") || !strings.Contains(md, "| ebpf.pod-pod-other-node |") {
		t.Errorf("report: exit %d, no CNI matrix\n%s\n%s", code, md, stderr)
	}

	// CI checks over a lab run: the baseline is the earlier lab's sweep of
	// the same protocol, and each protocol writes its own JUnit file.
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, stderr = cli(t, "lab", "--modes", "host-gw", "--paths", "loopback", "--protocols", "tcp-rr,tcp-stream", "-d", "300ms", "--warmup", "100ms",
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

// labProcess runs this test binary as `loadgen lab ARGS` in a process of its
// own, as a user would, so it can be interrupted.
func labProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return cliProcess(t, append([]string{"lab"}, args...)...)
}

// cliProcess runs this test binary as `loadgen ARGS` in a process of its own.
func cliProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOADGEN_TEST_AS_CLI=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

// waitSteps waits until dir holds n step files.
func waitSteps(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for len(stepFiles(t, dir)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d steps after 2 minutes", dir, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Ctrl-C in a lab prints the command that resumes it, and that command
// resumes it: finished steps stay as they were, nothing nests.
func TestLabResume(t *testing.T) {
	needLab(t)
	dir := filepath.Join(t.TempDir(), "cni")
	args := []string{"--modes", "host-gw,vxlan", "--paths", "loopback,pod-pod-same-node,pod-pod-other-node", "--protocols", "tcp-rr,tcp-stream",
		"-d", "700ms", "--warmup", "0s", "-o", dir, "-q"}
	cmd, out, stderr := labProcess(t, args...)
	waitSteps(t, filepath.Join(dir, "tcp-rr"), 2)
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(cmd.Wait()); code != 130 {
		t.Fatalf("interrupted lab: exit %d, want 130\n%s\n%s", code, out, stderr)
	}
	m := regexp.MustCompile(`continue with: (loadgen lab .*)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no resume command:\n%s", stderr)
	}
	resume := m[1]
	if !strings.HasSuffix(resume, "-o "+dir+" --resume") || !strings.Contains(resume, "--modes host-gw,vxlan") {
		t.Fatalf("resume command %q: want the lab's own flags and -o %s --resume", resume, dir)
	}
	before := stepFiles(t, filepath.Join(dir, "tcp-rr"))
	_, saved, err := store.ReadSweep(filepath.Join(dir, "tcp-rr"))
	if err != nil {
		t.Fatal(err)
	}
	finished := map[string]bool{}
	for _, st := range saved {
		if st.Run != nil && !st.Run.Interrupted {
			finished[st.ID] = true
		}
	}
	if len(finished) == 0 {
		t.Fatalf("no step finished before Ctrl-C: %v", before)
	}

	// Run the printed command, as a user pastes it into a shell.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", strings.Replace(resume, "loadgen", strconv.Quote(exe), 1))
	sh.Env = append(os.Environ(), "LOADGEN_TEST_AS_CLI=1")
	combined, err := sh.CombinedOutput()
	if exitCode(err) != 0 {
		t.Fatalf("%s: %v\n%s", resume, err, combined)
	}
	for _, nested := range []string{filepath.Join(dir, "tcp-rr", "tcp-rr"), filepath.Join(dir, "tcp-rr", "tcp-stream")} {
		if _, err := os.Stat(nested); err == nil {
			t.Errorf("the resumed lab nested a new one in %s", nested)
		}
	}
	after := stepFiles(t, filepath.Join(dir, "tcp-rr"))
	for id := range finished {
		if !after[id].Equal(before[id]) {
			t.Errorf("finished step %s was run again", id)
		}
	}
	for _, proto := range []string{"tcp-rr", "tcp-stream"} {
		_, steps, err := store.ReadSweep(filepath.Join(dir, proto))
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 5 {
			t.Errorf("%s: %d steps after resuming, want 5", proto, len(steps))
		}
		for _, st := range steps {
			if st.Run == nil || st.Run.Interrupted {
				t.Errorf("%s %s: not complete after resuming", proto, st.ID)
			}
		}
	}
}

// A lab whose target dies fails the steps after it, keeps what was
// measured, and exits 1 with a last line naming the failed steps.
func TestLabFailedStepExit(t *testing.T) {
	needLab(t)
	dir := filepath.Join(t.TempDir(), "cni")
	cmd, out, stderr := labProcess(t, "--modes", "host-gw", "--paths", "loopback,node-node", "--protocols", "tcp-rr",
		"--ladder", "c1t1,c2t2,c4t4", "-d", "500ms", "--warmup", "0s", "-o", dir, "-q")
	waitSteps(t, filepath.Join(dir, "tcp-rr"), 1)
	// Kill the lab's tcp targets: its children running `serve tcp`.
	killed := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(cmd.Process.Pid) {
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			if bytes.Contains(cmdline, []byte("serve\x00tcp")) {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				syscall.Kill(pid, syscall.SIGKILL)
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatal("found no tcp target of the lab to kill")
	}
	if code := exitCode(cmd.Wait()); code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^lab: \d+ of \d+ steps failed: tcp-rr `).MatchString(last) {
		t.Errorf("last line %q does not name the failed steps\n%s", last, out)
	}
}

// The lab needs iptables only for the Service paths, and its errors say
// "lab:" once.
func TestLabTools(t *testing.T) {
	needLab(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1")
	bin := t.TempDir()
	for _, tool := range []string{"ip", "sysctl", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin) // no iptables
	code, out, stderr := cli(t, "lab", "--modes", "host-gw", "--paths", "pod-pod-other-node", "--protocols", "tcp-rr", "-d", "200ms", "--warmup", "0s",
		"-o", filepath.Join(t.TempDir(), "a"), "-q")
	if code != 0 {
		t.Fatalf("a lab without Service paths needs no iptables, but: exit %d\n%s\n%s", code, out, stderr)
	}
	code, _, stderr = cli(t, "lab", "--modes", "host-gw", "--paths", "pod-service-local", "-o", filepath.Join(t.TempDir(), "b"), "-q")
	if code != 1 || !strings.Contains(stderr, "iptables not found") || strings.Contains(stderr, "lab: lab:") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("Service path without iptables: exit %d, want 1 with one line naming iptables:\n%s", code, stderr)
	}
	t.Setenv("PATH", t.TempDir()) // nothing at all
	code, _, stderr = cli(t, "lab", "-o", filepath.Join(t.TempDir(), "c"), "-q")
	if code != 1 || !strings.Contains(stderr, "loadgen: lab: ip not found") || strings.Contains(stderr, "lab: lab:") {
		t.Errorf("no ip: exit %d\n%s", code, stderr)
	}
}

func TestLabBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--protocols", "sctp-rr"}, {"--protocols", ","}, {"--ladder", "c1t2"}, {"--size", "-1"}, {"--size", "0"}, {"-d", "0s"}, {"--resume"},
		{"--paths", "loopback,pod-pod-wireguard"}, {"--modes", "host-gw,wireguard"}, {"--modes", "vxlan,vxlan"},
		{"-o", os.TempDir(), "--resume"}, // holds no lab
	} {
		code, _, stderr := cli(t, append([]string{"lab"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("lab %v: exit %d, want 2 with a short message:\n%s", args, code, stderr)
		}
	}
	if code, _, stderr := cli(t, "lab", "udp-tunnel", "flannel0", "nonsense", "1.2.3.0/24=1.2.3.4:1"); code != 2 || !strings.Contains(stderr, "listen address") {
		t.Errorf("udp-tunnel with a bad address: exit %d\n%s", code, stderr)
	}
}
