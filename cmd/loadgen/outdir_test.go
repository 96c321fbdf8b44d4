package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Output paths that cannot take results, and a run over the file
// descriptor limit, are refused with one clear line and exit 2 before any
// server starts or any load is sent.
func TestRefusedBeforeAnythingStarts(t *testing.T) {
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // were a demo or size started, this binary would be its httpbin
	url := startHTTPBin(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sweep", "-q", "-o", "/proc/x", "--path", "baseline=" + url, "--ladder", "c1t1", "-d", "1s"}, "-o /proc/x: cannot create a directory in /proc"},
		{[]string{"sweep", "-q", "-o", "/etc/passwd", "--path", "baseline=" + url, "--ladder", "c1t1", "-d", "1s"}, "-o /etc/passwd: it is a file, not a directory"},
		{[]string{"sweep", "-q", "-o", file + "/sub"}, "is a file, not a directory"},
		{[]string{"sweep", "-q", "-o", "/proc/x"}, "-o /proc/x"}, // the demo: before its servers start
		{[]string{"size", "-q", "-o", "/etc/passwd"}, "-o /etc/passwd: it is a file"},
		{[]string{"lab", "-q", "-o", "/proc/x/y"}, "-o /proc/x/y"},
		{[]string{"study", "nginx-sizing", "-o", "/etc/passwd"}, "-o /etc/passwd"},
	} {
		code, out, stderr := cli(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitUsage || !strings.HasPrefix(lines[0], "loadgen: ") || !strings.Contains(lines[0], tc.msg) || len(lines) > 2 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.msg)
		}
		if strings.Contains(stderr, "listening") || out != "" {
			t.Errorf("%v: something started:\n%s\n%s", tc.args, out, stderr)
		}
	}
	if _, err := os.Stat("/proc/x"); err == nil {
		t.Error("/proc/x exists")
	}

	// More connections than the file descriptor limit allows: refused
	// before the header, not after "Running 2s test".
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = min(lim.Cur, 4096)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	code, out, stderr := cli(t, "run", "-c", "30000", "-d", "2s", url+"/get")
	first := strings.SplitN(stderr, "\n", 2)[0]
	if code != exitUsage || out != "" || !strings.Contains(first, "file descriptors") {
		t.Errorf("-c 30000 over the limit: exit %d, stdout %q, stderr %q; want 2, nothing on stdout and a line on the limit", code, out, stderr)
	}
}
