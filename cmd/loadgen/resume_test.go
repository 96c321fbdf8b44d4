package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sweep resumed with other settings would mix steps that do not compare
// (2 s ones beside 3 s ones, another endpoint or protocol): it is refused,
// naming what differs, and nothing runs. The same settings resume.
func TestSweepResumeRefusesOtherSettings(t *testing.T) {
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	args := []string{"sweep", "-q", "--path", "baseline=" + url, "--ladder", "c1t1,c2t1", "--payloads", "100", "-d", "200ms", "-o", dir}
	if code, _, stderr := cli(t, args...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	gone := filepath.Join(dir, "steps", "baseline_c2t1_100B_closed_r1.json")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	for _, other := range [][]string{{"-d", "300ms"}, {"--endpoint", "/get"}, {"--warmup", "1s"}} {
		again := append(append([]string{}, args...), "--resume")
		for i, a := range again {
			if a == other[0] {
				again[i+1] = other[1]
				other = nil
				break
			}
		}
		if other != nil {
			again = append(again, other...)
		}
		code, _, stderr := cli(t, again...)
		if code == 0 || !strings.Contains(stderr, "other settings") {
			t.Errorf("%v: exit %d, %s", again, code, stderr)
		}
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%v: the missing step ran", again)
		}
	}
	if code, _, stderr := cli(t, append(args, "--resume")...); code != 0 {
		t.Fatalf("resume with the same settings: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Error("resumed with the same settings, the missing step did not run")
	}
}

// `sweep -o DIR --resume` with no -f and no --path continues the sweep
// saved in DIR, from its manifest: not the built-in demo, whose servers
// would start only to be refused as another plan.
func TestSweepResumeFromManifest(t *testing.T) {
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // were the demo started, this binary would be its httpbin
	url := startHTTPBin(t)
	dir := filepath.Join(t.TempDir(), "s")
	if code, _, stderr := cli(t, "sweep", "-q", "--path", "baseline="+url, "--ladder", "c1t1,c2t1", "--payloads", "100", "-d", "200ms", "-o", dir); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	gone := filepath.Join(dir, "steps", "baseline_c2t1_100B_closed_r1.json")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "sweep", "-q", "-o", dir, "--resume")
	if code != 0 {
		t.Fatalf("resume from the manifest: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(stderr, "listening") || strings.Contains(out, "nginx") {
		t.Errorf("the resume started the demo:\n%s\n%s", out, stderr)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Error("the missing step did not run")
	}
	// A resume with another plan is refused before anything starts:
	// exit 2, the command line must change.
	code, _, stderr = cli(t, "sweep", "-q", "-o", dir, "--resume", "--path", "baseline="+url, "--ladder", "c4t4", "--payloads", "100", "-d", "200ms")
	if code != exitUsage || !strings.Contains(stderr, "another plan") {
		t.Errorf("resume with another plan: exit %d, %s; want 2", code, stderr)
	}
	// And a directory that holds no sweep, before the demo starts.
	code, _, stderr = cli(t, "sweep", "-q", "-o", t.TempDir(), "--resume")
	if code != exitUsage || !strings.Contains(stderr, "holds no sweep") || strings.Contains(stderr, "listening") {
		t.Errorf("resume of an empty directory: exit %d, %s; want 2 before anything starts", code, stderr)
	}
}

// `size -o DIR --resume` continues the sizing saved in DIR with its own
// worker counts, ladder, durations and key type, not the defaults; a
// resume with another plan or key type is refused (exit 2) before nginx
// starts.
func TestSizeResumeFromManifest(t *testing.T) {
	needNginx(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // size's httpbin is this binary
	dir := filepath.Join(t.TempDir(), "s")
	if code, out, stderr := cli(t, "size", "-q", "--workers", "1", "--ladder", "c2t1", "-d", "300ms", "--warmup", "0", "--key-type", "ecdsa", "-o", dir); code != 0 {
		t.Fatalf("size: exit %d\n%s\n%s", code, out, stderr)
	}
	gone := filepath.Join(dir, "steps", "nginx-w1-tls_c2t1_1KiB_closed_r1.json")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "size", "-q", "-o", dir, "--resume")
	if code != 0 {
		t.Fatalf("size --resume: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(gone); err != nil {
		t.Error("the missing step did not run")
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "full ECDSA P-256 handshake") {
		t.Errorf("the resumed sizing does not make the saved ECDSA key:\n%s", out)
	}
	code, _, stderr = cli(t, "size", "-q", "-o", dir, "--resume", "--workers", "1,2")
	if code != exitUsage || !strings.Contains(stderr, "another plan") || strings.Contains(stderr, "listening") {
		t.Errorf("size --resume with other workers: exit %d, %s; want 2 before anything starts", code, stderr)
	}
	code, _, stderr = cli(t, "size", "-q", "-o", dir, "--resume", "--key-type", "rsa")
	if code != exitUsage || !strings.Contains(stderr, "other settings (key_type)") || strings.Contains(stderr, "listening") {
		t.Errorf("size --resume with another key type: exit %d, %s; want 2 before anything starts", code, stderr)
	}
}

// The command that continues a stopped sweep keeps its checks: a resume
// without --assert, --junit or --abort-on-fail would judge nothing (the
// hint once kept only -f and --label).
func TestSweepResumeHintKeepsChecks(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir()
	out, junit := filepath.Join(dir, "s"), filepath.Join(dir, "junit.xml")
	code, stdout, stderr := cli(t, "sweep", "--path", "baseline="+url, "--endpoint", "/status/500", "--ladder", "c1t1,c2t2", "--payloads", "100",
		"-d", "10s", "-q", "--assert", "errors<1%", "--abort-on-fail", "--junit", junit, "--label", "team=net", "-o", out)
	if code != exitAborted {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := "continue with: loadgen sweep --path baseline=" + url + " --ladder c1t1,c2t2 --payloads 100 --endpoint /status/500 " +
		"--duration 10s --quiet --assert 'errors<1%' --junit " + junit + " --abort-on-fail --label team=net -o " + out + " --resume"
	if !strings.Contains(stderr, want) {
		t.Errorf("the hint is not\n%s\nstderr:\n%s", want, stderr)
	}
}
