package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// --hlog, --json and --junit to a FIFO no process reads fail at once, in
// one line with exit status 2, before any load: the log is never lost
// into a pipe nobody drains (os.Create opened a FIFO read-write, so the
// run passed, and a long one would have waited once the pipe was full).
// With a reader, the log arrives whole.
func TestHLogFIFO(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--hlog", "--json", "--junit"} {
		args := []string{"run", "-n", "20", "-c", "1", "-t", "1", flag, fifo, srv.URL}
		if flag == "--junit" {
			args = append(args[:len(args)-1], "--assert", "errors<1%", srv.URL)
		}
		code, _, stderr := cli(t, args...)
		first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
		if code != exitUsage || first != "loadgen: "+flag+": cannot write "+fifo+": it is a FIFO that no process reads: start its reader first" {
			t.Errorf("%s FIFO without a reader: exit %d\n%s", flag, code, stderr)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target got %d requests before the refusal", n)
	}

	// With a reader that reads until the end of its input, as cat does,
	// the log arrives whole: the FIFO the check found a reader on is the
	// one written, not closed in between (which would end that reader).
	url := startHTTPBin(t) + "/get"
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a reader, there before the run
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	code, _, stderr := cli(t, "run", "-n", "20", "-c", "1", "-t", "1", "--hlog", fifo, url)
	if code != exitOK {
		t.Fatalf("--hlog FIFO with a reader: exit %d\n%s", code, stderr)
	}
	b, err := io.ReadAll(r) // the writer has closed: the end of the input
	if err != nil || !strings.Contains(string(b), "#[StartTime:") || !strings.Contains(string(b), "HIST") {
		t.Errorf("the reader got (%v):\n%s", err, b)
	}
}

// sweep --junit is checked before any load as run's is: a directory, or
// a FIFO no process reads, is refused at once (exit status 2), not found
// out when the report is written after the sweep.
func TestSweepJunitCheckedAsRun(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, why := range map[string]string{dir: "it is a directory", fifo: "it is a FIFO that no process reads"} {
		code, _, stderr := cli(t, "sweep", "--dry-run", "-o", filepath.Join(t.TempDir(), "s"), "--assert", "errors<1%", "--junit", path)
		if code != exitUsage || !strings.HasPrefix(stderr, "loadgen: --junit: cannot write "+path+": "+why) {
			t.Errorf("sweep --junit %s: exit %d\n%s", path, code, stderr)
		}
	}
}
