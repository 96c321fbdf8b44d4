package sweep

import (
	"slices"
	"testing"
)

// TestResumeFlags: a resume hint keeps every flag but -o, --resume and
// --dry-run, the checks too (sweep's hint once kept only -f and --label,
// and a resume lost --assert, --baseline, --junit and --abort-on-fail).
func TestResumeFlags(t *testing.T) {
	sweepFlags := []string{"file", "out", "resume", "path", "watch", "ladder", "payloads", "protocol", "duration",
		"quiet", "dry-run", "assert", "junit", "baseline", "max-regression", "abort-on-fail", "keep-going",
		"find-max", "slo", "label"}
	got := ResumeFlags(sweepFlags)
	for _, n := range []string{"file", "path", "ladder", "assert", "junit", "baseline", "max-regression", "abort-on-fail", "keep-going", "find-max", "slo", "label"} {
		if !slices.Contains(got, n) {
			t.Errorf("ResumeFlags drops --%s", n)
		}
	}
	for _, n := range []string{"out", "resume", "dry-run"} {
		if slices.Contains(got, n) {
			t.Errorf("ResumeFlags keeps --%s", n)
		}
	}
	if want := len(sweepFlags) - 3; len(got) != want || got[0] != "file" || got[len(got)-1] != "label" {
		t.Errorf("ResumeFlags = %v: want the %d others in order", got, want)
	}
}

// TestResumeCommand: the command that continues a run repeats its flags
// and its results directory, each quoted for a shell: a directory or a
// value with a space comes back as one argument.
func TestResumeCommand(t *testing.T) {
	for _, tc := range []struct {
		command string
		flags   []string
		dir     string
		want    string
	}{
		{"sweep", nil, "res", "loadgen sweep -o res --resume"},
		{"sweep", []string{"--file", "s.yaml"}, "res", "loadgen sweep --file s.yaml -o res --resume"},
		{"sweep", []string{"--file", "s.yaml"}, "my res", "loadgen sweep --file s.yaml -o 'my res' --resume"},
		{"sweep", []string{"--file", "s.yaml"}, "it's", `loadgen sweep --file s.yaml -o 'it'\''s' --resume`},
		{"size", []string{"--assert", "p99<20ms", "--keep-going", "--label", "env=ci"}, "out",
			"loadgen size --assert 'p99<20ms' --keep-going --label env=ci -o out --resume"},
		{"study flannel-backends", []string{"--duration", "5s"}, "results/flannel",
			"loadgen study flannel-backends --duration 5s -o results/flannel --resume"},
		{"lab", nil, "", "loadgen lab -o '' --resume"},
	} {
		if got := ResumeCommand(tc.command, tc.flags, tc.dir); got != tc.want {
			t.Errorf("ResumeCommand(%q, %q, %q) = %s, want %s", tc.command, tc.flags, tc.dir, got, tc.want)
		}
	}
}
