package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every example runs as written: each is checked and its plan printed,
// with nothing built or sent.
func TestExamplesDryRun(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		steps int
	}{
		{[]string{"sweep", "-f", "../../examples/sidecars.yaml", "--dry-run"}, 17 * 7 * 2},
		{[]string{"size", "-f", "../../examples/ingress-sizing.yaml", "--dry-run"}, 4},
		{[]string{"lab", "-f", "../../examples/lab-matrix.yaml", "--dry-run"}, 3 * 6 * 10},
		{[]string{"sweep", "-f", "../../examples/compose/sweep.yaml", "--dry-run"}, 3 * 4 * 2},
	} {
		t.Run(tc.args[2], func(t *testing.T) {
			code, out, stderr := cli(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			if n := len(regexp.MustCompile(`(?m)^\d+ +\S+_r\d+ `).FindAllString(out, -1)); n != tc.steps {
				t.Errorf("%d steps in the plan, want %d:\n%s", n, tc.steps, out)
			}
		})
	}
}

// An options file sets flags through their own parsers, the command line
// wins over it, and a key that is no option is refused.
func TestOptionsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := dir + "/o.yaml"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, out, _ := cli(t, "size", "--dry-run", "-f", write("workers: [1, 3]\nladder: c8t2\n"), "--ladder", "c4t2")
	if code != 0 || !strings.Contains(out, "nginx-w3_c4t2_") || strings.Contains(out, "c8t2") {
		t.Errorf("exit %d: the file's workers and the command line's ladder, want both:\n%s", code, out)
	}
	for body, msg := range map[string]string{
		"bogus: 1\n":         `"bogus" is not an option here`,
		"duration: ten\n":    `"ten" is not a duration`,
		"workers: {a: b}\n":  "want a value or a list",
		"file: other.yaml\n": `"file" is not an option here`,
	} {
		code, _, stderr := cli(t, "size", "--dry-run", "-f", write(body))
		if code != exitUsage || !strings.Contains(stderr, msg) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", body, code, stderr, msg)
		}
	}
}
