// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// machine is a PATH for scripts/deps: stand-ins for id (printing uid),
// for apt-get when apt (each call appended to a log) and for each command
// in have. Nothing of the real machine is on it.
type machine struct {
	dir, log string
}

func newMachine(t *testing.T, uid string, apt bool, have []string) machine {
	t.Helper()
	m := machine{dir: t.TempDir()}
	m.log = filepath.Join(m.dir, "apt.log")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(m.dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("id", "echo "+uid+"\n")
	if apt {
		write("apt-get", `echo "$@" >>`+m.log+"\n")
	}
	for _, c := range have {
		write(c, "exit 0\n")
	}
	return m
}

// run runs scripts/deps with args on m: its exit status, stdout, stderr
// and the apt-get calls it made.
func (m machine) run(t *testing.T, args ...string) (code int, stdout, stderr string, apt []string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"deps"}, args...)...)
	cmd.Env = []string{"PATH=" + m.dir}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(m.log); err == nil {
		apt = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return code, out.String(), errb.String(), apt
}

// probes reads, from --check on a machine that has nothing, each package
// and the command that shows it installed.
func probes(t *testing.T) (pkgs, cmds []string) {
	m := newMachine(t, "0", true, nil)
	code, out, _, apt := m.run(t, "--check")
	if code != 1 || apt != nil {
		t.Fatalf("--check with nothing installed: exit %d, apt-get %q: want 1 and no apt-get", code, apt)
	}
	for _, l := range regexp.MustCompile(`(?m)^(\S+) +missing \(no ([^)]+)\)`).FindAllStringSubmatch(out, -1) {
		pkgs = append(pkgs, l[1])
		if !strings.HasPrefix(l[2], "/") {
			cmds = append(cmds, l[2])
		}
	}
	for _, want := range []string{"iptables", "nginx", "chromium", "containerd"} {
		if !slices.Contains(pkgs, want) {
			t.Fatalf("--check names no %s:\n%s", want, out)
		}
	}
	return pkgs, cmds
}

func TestDepsNotRootStops(t *testing.T) {
	pkgs, _ := probes(t)
	for _, apt := range []bool{true, false} {
		m := newMachine(t, "1000", apt, []string{"make", "nginx"})
		code, out, stderr, calls := m.run(t)
		if code != 1 || calls != nil || out != "" {
			t.Errorf("apt-get %v, not root: exit %d, apt-get %q, stdout %q: want 1, no apt-get, nothing on stdout", apt, code, calls, out)
		}
		if n := strings.Count(stderr, "\n"); n != 1 {
			t.Errorf("not root: %d lines on stderr, want one:\n%s", n, stderr)
		}
		for _, p := range pkgs {
			named := strings.Contains(stderr, " "+p+" ") || strings.HasSuffix(stderr, " "+p+"\n")
			if named == (p == "make" || p == "nginx") {
				t.Errorf("not root: %s named %v, want %v: %s", p, named, !named, stderr)
			}
		}
	}
}

func TestDepsRootInstalls(t *testing.T) {
	m := newMachine(t, "0", true, []string{"make", "nginx", "caddy"})
	code, _, stderr, calls := m.run(t)
	if code != 0 || len(calls) != 2 || calls[0] != "update -q" || !strings.HasPrefix(calls[1], "install -y -q ") {
		t.Fatalf("root with apt-get: exit %d, apt-get calls %q, stderr %s", code, calls, stderr)
	}
	installs := strings.Fields(strings.TrimPrefix(calls[1], "install -y -q "))
	if slices.Contains(installs, "nginx") || !slices.Contains(installs, "iptables") {
		t.Errorf("installs %q: want iptables and not nginx (present)", installs)
	}
	// Root without apt-get (not Debian): one line, nothing run.
	m = newMachine(t, "0", false, nil)
	if code, _, stderr, _ := m.run(t); code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "iptables") {
		t.Errorf("root without apt-get: exit %d, stderr %q: want 1 and one line naming iptables", code, stderr)
	}
}

func TestDepsAllPresent(t *testing.T) {
	_, cmds := probes(t)
	// The one path probe (the CNI plugins) is the real machine's.
	var want []string
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		want = []string{"containernetworking-plugins"}
	}
	m := newMachine(t, "0", true, cmds)
	code, out, _, calls := m.run(t, "--check")
	if got := regexp.MustCompile(`(?m)^\S+`).FindAllString(strings.TrimPrefix(out, "every package the tests need is installed\n"), -1); !slices.Equal(got, want) {
		t.Errorf("--check names %q, want %q:\n%s", got, want, out)
	}
	if (code == 0) != (want == nil) || calls != nil {
		t.Errorf("--check: exit %d, apt-get %q", code, calls)
	}
	if m := newMachine(t, "1000", false, cmds); want == nil {
		if code, out, stderr, _ := m.run(t); code != 0 || out+stderr != "" {
			t.Errorf("everything present, not root: exit %d, %q %q: want 0 and silence", code, out, stderr)
		}
	}
}

func TestDepsBadArgument(t *testing.T) {
	m := newMachine(t, "0", true, nil)
	if code, _, stderr, calls := m.run(t, "--install-everything"); code != 2 || calls != nil || !strings.Contains(stderr, "--check") {
		t.Errorf("exit %d, apt-get %q, stderr %q: want 2, no apt-get, the arguments named", code, calls, stderr)
	}
}
