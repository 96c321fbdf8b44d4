package k8s

import (
	"strings"
	"testing"
)

// CheckRunCounts is k8s run's check of --workers and --start-retries:
// a Job has a worker at least, and a late step is rerun zero times or
// more.
func TestCheckRunCounts(t *testing.T) {
	for _, tc := range []struct {
		workers, retries int
		err              string
	}{
		{1, 0, ""},
		{16, 3, ""},
		{0, 0, "--workers 0: want 1 or more"},
		{-2, 0, "--workers -2: want 1 or more"},
		{1, -1, "--start-retries -1: want 0 (fail a late step) or more"},
		{0, -1, "--workers 0: want 1 or more"}, // the first wrong one
	} {
		err := CheckRunCounts(tc.workers, tc.retries)
		if got := errText(err); got != tc.err {
			t.Errorf("CheckRunCounts(%d, %d) = %q, want %q", tc.workers, tc.retries, got, tc.err)
		}
	}
}

// PathCertName names a path's client certificate by its place: a Secret
// key stem ClientCertObjects takes, one per place, the files the workers'
// `loadgen run` is given.
func TestPathCertName(t *testing.T) {
	seen := map[string]int{}
	for _, tc := range []struct {
		i    int
		want string
	}{{0, "path0"}, {1, "path1"}, {10, "path10"}, {123, "path123"}} {
		got := PathCertName(tc.i)
		if got != tc.want || !secretKeyStem.MatchString(got) {
			t.Errorf("PathCertName(%d) = %q, want %q, a Secret key stem", tc.i, got, tc.want)
		}
		if j, ok := seen[got]; ok {
			t.Errorf("paths %d and %d share %q", j, tc.i, got)
		}
		seen[got] = tc.i
		if args := strings.Join(ClientCertArgs(got), " "); args != "--cert "+ClientCertDir+"/"+tc.want+".crt --key "+ClientCertDir+"/"+tc.want+".key" {
			t.Errorf("ClientCertArgs(%q) = %s", got, args)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
