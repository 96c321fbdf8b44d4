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
