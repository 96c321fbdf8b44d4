package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A sweep file that lacks several required keys names them all at once,
// not one a run.
func TestSweepFileMissingKeysAllAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(file, []byte("duration: 10s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "sweep", "-f", file, "--dry-run")
	for _, key := range []string{"3 required keys are missing", "paths:", "ladder is missing", "payloads is missing"} {
		if code != exitUsage || !strings.Contains(stderr, key) {
			t.Errorf("exit %d; stderr does not say %q:\n%s", code, key, stderr)
		}
	}
	if err := os.WriteFile(file, []byte("paths:\n  - url: http://127.0.0.1:8080\n  - name: nginx\n  - {}\nladder: c1t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "sweep", "-f", file, "--dry-run")
	for _, key := range []string{"5 required keys are missing", "paths[0]: name is missing", "paths[1] (nginx): url is missing", "paths[2]: name and url are missing", "payloads is missing"} {
		if code != exitUsage || !strings.Contains(stderr, key) {
			t.Errorf("exit %d; stderr does not say %q:\n%s", code, key, stderr)
		}
	}
}

// A size (or lab) options file with several wrong keys names them all at
// once.
func TestOptionsFileWrongKeysAllAtOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "size.yaml")
	if err := os.WriteFile(file, []byte("bogus: 1\nduration: ten\nwokers: [1, 2]\nladder: c4t2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "size", "-f", file, "--dry-run")
	for _, want := range []string{"3 keys are wrong", `"bogus" is not an option here`, `"wokers" is not an option here`, `line 2: duration:`, `"ten" is not a duration`} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("exit %d; stderr does not say %q:\n%s", code, want, stderr)
		}
	}
}

// size --workers past the machine's CPUs warns, in one line, that those
// counts measure contention.
func TestSizeWorkersPastCPUsWarns(t *testing.T) {
	cpus := runtime.NumCPU()
	code, _, stderr := cli(t, "size", "--workers", fmt.Sprintf("1..%d", cpus+1), "--dry-run")
	want := fmt.Sprintf("loadgen: --workers up to %d on %s: nginx's workers past %d share CPUs", cpus+1, plural(cpus, "CPU"), cpus)
	if code != exitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d; stderr does not warn %q:\n%s", code, want, stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "loadgen: --workers") && strings.Contains(stderr, l+"\n  ") {
			t.Errorf("the warning is not one line:\n%s", stderr)
		}
	}
	if _, _, stderr := cli(t, "size", "--workers", fmt.Sprintf("1..%d", cpus), "--dry-run"); strings.Contains(stderr, "--workers up to") {
		t.Errorf("a warning within the CPUs:\n%s", stderr)
	}
}

// wrk users' -s script.lua: a usage error pointing to --targets and
// --body, before any load.
func TestRunScriptRefused(t *testing.T) {
	for _, args := range [][]string{{"-s", "post.lua"}, {"--script", "post.lua"}} {
		code, stdout, stderr := cli(t, append(append([]string{"run"}, args...), "http://127.0.0.1:1/")...)
		if code != exitUsage || !strings.Contains(stderr, "loadgen runs no Lua scripts (wrk -s)") ||
			!strings.Contains(stderr, "--targets FILE") || !strings.Contains(stderr, "--body") || stdout != "" {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
}

// run --help's -p names HTTP/2's two forms, h2 and h2c, with what each is.
func TestRunHelpNamesHTTP2(t *testing.T) {
	code, out, _ := cli(t, "run", "--help")
	text := oneLine(out)
	for _, want := range []string{"h2: HTTP/2 over TLS (https://, ALPN h2)", "h2c: HTTP/2 without TLS (http://, prior knowledge)", "http1: HTTP/1.1"} {
		if code != exitOK || !strings.Contains(text, want) {
			t.Errorf("run --help does not say %q", want)
		}
	}
}
