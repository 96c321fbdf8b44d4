package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"loadgen/meshes/k8s"
)

// TestCheckWire checks that the coordinator's wire version is this worker's,
// or the worker refuses with one line naming both sides' loadgen and wire
// versions; a coordinator that did not say is older than the check.
func TestCheckWire(t *testing.T) {
	if err := CheckWire(k8s.WireVersion, "v1.4.0", "v1.4.0"); err != nil {
		t.Errorf("the same wire: %v", err)
	}
	for _, tc := range []struct {
		wire        int
		coord, self string
		want        []string
	}{
		{k8s.WireVersion + 1, "v2.0.0", "v1.4.0", []string{"loadgen v2.0.0, wire " + fmt.Sprint(k8s.WireVersion+1), "loadgen v1.4.0, wire " + fmt.Sprint(k8s.WireVersion)}},
		{0, "", "v1.4.0", []string{"older than the wire check", "loadgen v1.4.0, wire " + fmt.Sprint(k8s.WireVersion)}},
		{k8s.WireVersion + 1, "", "", []string{"(version unknown), wire"}},
	} {
		err := CheckWire(tc.wire, tc.coord, tc.self)
		if !errors.Is(err, ErrWire) || strings.Contains(err.Error(), "\n") {
			t.Errorf("wire %d: %v, want ErrWire in one line", tc.wire, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("wire %d: %q lacks %q", tc.wire, err, w)
			}
		}
	}
}

// TestRunRefusesWire checks that a worker told another wire version runs
// nothing and says why in its report line, which the coordinator reads.
func TestRunRefusesWire(t *testing.T) {
	var out bytes.Buffer
	ran := false
	cfg := Config{Workers: 1, Connections: 1, Threads: 1, Wire: k8s.WireVersion + 1, CoordinatorVersion: "v9", Version: "v1",
		RunArgs: []string{"http://127.0.0.1:1/"}}
	err := Run(context.Background(), cfg, func(context.Context, []string, string) error { ran = true; return nil }, &out)
	if !errors.Is(err, ErrWire) || ran {
		t.Fatalf("err %v, ran %v: want ErrWire and no run", err, ran)
	}
	r, perr := ParseReport(out.Bytes())
	if perr != nil || r.Error != err.Error() || r.Wire != k8s.WireVersion {
		t.Errorf("report %+v (%v): want the error and wire %d", r, perr, k8s.WireVersion)
	}
}

// TestFailureNamesWireMismatch checks that the coordinator's reading of a
// failed worker's log. A worker that refused the wire version, and an image
// older than the check (which fails on --wire as an unknown flag, as
// `loadgen` prints it), are a mismatch with their line; any other failure
// is its report's error or the last log lines.
func TestFailureNamesWireMismatch(t *testing.T) {
	refusal := CheckWire(k8s.WireVersion+1, "v9", "v1")
	line, _ := Report{Error: refusal.Error(), Wire: k8s.WireVersion}.Line()
	for _, tc := range []struct {
		name, log, want string
		mismatch        bool
	}{
		{"refused", string(line) + "loadgen: " + refusal.Error() + "\n", "worker 0 (pod w) refused the step, exit code 1: " + refusal.Error(), true},
		{"older image", "loadgen: unknown flag: --wire\nRun 'loadgen k8s worker --help' for usage.\n",
			"worker 0 (pod w) refused the step, exit code 1: wire version mismatch: the worker's image is a loadgen older than the wire check " +
				"(loadgen: unknown flag: --wire); this coordinator speaks wire " + fmt.Sprint(k8s.WireVersion), true},
		{"late", mustLine(t, Report{Error: "started late: 3s"}) + "loadgen: started late: 3s\n", "worker 0 (pod w) failed, exit code 1: started late: 3s", false},
		{"crash", "panic: boom\ngoroutine 1\n", "worker 0 (pod w) failed: exit code 1; last log lines: panic: boom | goroutine 1", false},
	} {
		got, mismatch := failure(0, "w", "exit code 1", []byte(tc.log))
		if !strings.HasPrefix(got, tc.want) || mismatch != tc.mismatch || strings.Contains(got, "\n") {
			t.Errorf("%s: %q (mismatch %v), want %q… (mismatch %v)", tc.name, got, mismatch, tc.want, tc.mismatch)
		}
	}
}

func mustLine(t *testing.T, r Report) string {
	t.Helper()
	b, err := r.Line()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
