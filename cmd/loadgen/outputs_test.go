package main

import (
	"bytes"
	"encoding/xml"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"loadgen/results/store"
)

// `loadgen run --json - URL | jq`: the result on standard output, valid
// JSON and nothing else; wrk's summary on standard error.
func TestRunJSONToStdout(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	code, stdout, stderr := cli(t, "run", "-n", "40", "-c", "1", "-t", "1", "--json", "-", url)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	run, err := store.DecodeRun([]byte(stdout))
	if err != nil {
		t.Fatalf("stdout is not a run's JSON: %v\n%s", err, stdout)
	}
	if run.Summary.Requests != 40 || run.Config.Target != url {
		t.Errorf("the run on stdout: %d requests to %s, want 40 to %s", run.Summary.Requests, run.Config.Target, url)
	}
	if !strings.Contains(stderr, "Running 40 requests test @ "+url) || !strings.Contains(stderr, "Requests/sec:") {
		t.Errorf("the summary is not on stderr:\n%s", stderr)
	}
	// /dev/stdout is the same: written to the process's own standard
	// output, never opened anew (the link is not touched: it is not
	// replaced, nor written through by the store).
	code, stdout, stderr = cli(t, "run", "-n", "10", "-c", "1", "-t", "1", "--json", "/dev/stdout", url)
	if _, err := store.DecodeRun([]byte(stdout)); code != exitOK || err != nil || !strings.Contains(stderr, "Requests/sec:") {
		t.Errorf("--json /dev/stdout: exit %d, %v\nstdout %s\nstderr %s", code, err, stdout, stderr)
	}
}

// --junit - writes the report to standard output, the summary and the
// assertions' lines to standard error.
func TestRunJUnitToStdout(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	code, stdout, stderr := cli(t, "run", "-n", "20", "-c", "1", "-t", "1", "--assert", "errors<1%", "--junit", "-", url)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
	}
	if err := xml.Unmarshal([]byte(stdout), &suites); err != nil {
		t.Errorf("stdout is not JUnit XML: %v\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "Requests/sec:") || !strings.Contains(stderr, "errors<1%") {
		t.Errorf("the summary and assertions are not on stderr:\n%s", stderr)
	}
}

// Two outputs to standard output would mix: a usage error before any
// load; so is a --junit - where the command writes several reports.
func TestTwoOutputsToStdoutRefused(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-n", "1", "--json", "-", "--junit", "-", url}, "--json and --junit both write to standard output"},
		{[]string{"run", "-n", "1", "--json", "-", "--hlog", "/dev/stdout", url}, "--json and --hlog both write to standard output"},
		{[]string{"report", fixture, "--html", "-", "--markdown", "-"}, "--html and --markdown both write to standard output"},
		{[]string{"report", fixture, "--csv", "-", "--percentiles"}, "--csv and --percentiles both write to standard output"},
		{[]string{"lab", "--dry-run", "--junit", "-"}, "--junit -: this command writes several reports"},
	} {
		code, stdout, stderr := cli(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %.200q, stderr %.300q; want exit 2 saying %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// report's and merge's outputs to standard output: the HTML page, the
// merged run.
func TestReportAndMergeToStdout(t *testing.T) {
	code, stdout, stderr := cli(t, "report", fixture, "--html", "-")
	if code != exitOK || !strings.HasPrefix(stdout, "<!doctype html>") {
		t.Errorf("report --html -: exit %d, stdout starts %.40q, stderr %s", code, stdout, stderr)
	}
	dir := t.TempDir()
	a := writeJSON(t, filepath.Join(dir, "a.json"), mergeRun(t, "a", 0, 100))
	b := writeJSON(t, filepath.Join(dir, "b.json"), mergeRun(t, "b", 0, 200))
	code, stdout, stderr = cli(t, "merge", a, b, "-o", "-")
	if code != exitOK {
		t.Fatalf("merge -o -: exit %d: %s", code, stderr)
	}
	run, err := store.DecodeRun([]byte(stdout))
	if err != nil || run.Summary.Requests != 300 {
		t.Errorf("merge -o -: stdout is not the merged run (%v):\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "merged 2 runs into -") {
		t.Errorf("merge -o -: the summary is not on stderr:\n%s", stderr)
	}
}

// Output paths never destroy what is there: run --json through a link
// replaces the link's target and keeps the link; into a FIFO with a reader
// it writes the bytes and the FIFO stays; an existing file keeps its mode.
func TestRunOutputsThroughLinksAndFIFOs(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	target := filepath.Join(dir, "t.json")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("t.json", link); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.xml")
	if err := os.Symlink("missing.xml", report); err != nil { // dangling: its target is made
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "run", "-n", "10", "-c", "1", "-t", "1", "--json", link, "--assert", "errors<1%", "--junit", report, url)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, l := range []string{link, report} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v", l, err)
		}
	}
	if _, err := store.ReadRun(target); err != nil {
		t.Errorf("the link's target: %v", err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the link's target lost its mode 0600: %v", fi.Mode())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "missing.xml")); err != nil || !bytes.Contains(b, []byte("<testsuites")) {
		t.Errorf("the dangling link's target: %v\n%s", err, b)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0) // a reader, there before the write
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte, 1)
	go func() {
		// The JSON ends with "}\n" at depth 0: read until it is whole.
		var b []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			b = append(b, buf[:n]...)
			if _, derr := store.DecodeRun(b); derr == nil || err != nil {
				got <- b
				return
			}
		}
	}()
	code, _, stderr = cli(t, "run", "-n", "10", "-c", "1", "-t", "1", "--json", fifo, url)
	if code != exitOK {
		t.Fatalf("--json FIFO: exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v (%v)", fi.Mode(), err)
	}
	if run, err := store.DecodeRun(<-got); err != nil || run.Summary.Requests != 10 {
		t.Errorf("the FIFO's reader did not get the run: %v", err)
	}
}

// A character device made in the test's directory (a copy of /dev/null)
// takes run's JSON and report's HTML, and stays a device.
func TestRunOutputsToDevice(t *testing.T) {
	needRoot(t)
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "run", "-n", "5", "-c", "1", "-t", "1", "--json", null, url); code != exitOK {
		t.Fatalf("--json DEVICE: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, "report", fixture, "--html", null, "--csv", null); code != exitOK {
		t.Fatalf("report --html DEVICE --csv DEVICE: exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the device is now %v (%v)", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries: temporary files left?", len(entries))
	}
}
