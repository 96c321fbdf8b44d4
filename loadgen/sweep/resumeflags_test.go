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
