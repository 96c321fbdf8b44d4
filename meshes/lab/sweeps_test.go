package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// statusErr is a sweep's error that carries an exit status, as the CLI's
// do.
type statusErr struct{ code compare.Exit }

func (e statusErr) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func status(err error) (compare.Exit, bool) {
	var se statusErr
	if errors.As(err, &se) {
		return se.code, true
	}
	return 0, false
}

// writeSweep writes a sweep's results directory holding one step per id;
// those in failed have no run, failed for that reason.
func writeSweep(t *testing.T, dir string, ids []string, failed map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, store.StepsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Steps: ids}
	if err := store.WriteJSON(filepath.Join(dir, store.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		st := results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Index: i, ID: id, Failed: failed[id]}
		if st.Failed == "" {
			st.Run = &results.Run{Interrupted: true} // no failure of its own
		}
		if err := store.WriteJSON(filepath.Join(dir, store.StepsDir, id+".json"), st); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunSweeps: a lab runs each protocol's sweep in its own directory;
// a failed step or a check that did not hold fails the lab once every
// protocol ran, while Ctrl-C, a refused command line or an error with no
// status ends it at that sweep.
func TestRunSweeps(t *testing.T) {
	protocols := []string{"tcp-rr", "tcp-crr", "tcp-stream"}
	for _, tc := range []struct {
		name    string
		errs    map[string]error // each protocol's sweep's error
		failed  map[string]string
		ran     []string // the protocols whose sweep ran
		err     error    // RunSweeps' error
		failIDs []string
		exit    compare.Exit
	}{
		{name: "all ran", ran: protocols, exit: compare.OK},
		{name: "a failed step goes on", errs: map[string]error{"tcp-crr": statusErr{compare.Failed}},
			failed: map[string]string{"s1": "cannot connect"}, ran: protocols,
			failIDs: []string{"tcp-rr s1", "tcp-crr s1", "tcp-stream s1"}, exit: compare.Failed},
		{name: "a breach goes on", errs: map[string]error{"tcp-rr": statusErr{compare.Breached}}, ran: protocols, exit: compare.Breached},
		{name: "the worst of two", errs: map[string]error{"tcp-rr": statusErr{compare.Undecided}, "tcp-stream": statusErr{compare.Breached}},
			ran: protocols, exit: compare.Breached},
		{name: "Ctrl-C stops", errs: map[string]error{"tcp-crr": statusErr{compare.Interrupted}}, ran: protocols[:2],
			err: statusErr{compare.Interrupted}},
		{name: "SIGTERM stops", errs: map[string]error{"tcp-rr": statusErr{compare.Terminated}}, ran: protocols[:1],
			err: statusErr{compare.Terminated}},
		{name: "usage stops", errs: map[string]error{"tcp-rr": statusErr{compare.Usage}}, ran: protocols[:1],
			err: statusErr{compare.Usage}},
		{name: "no status stops", errs: map[string]error{"tcp-crr": errors.New("lab: bad spec")}, ran: protocols[:2],
			err: errors.New("lab: bad spec")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var ran []string
			sw, err := RunSweeps(out, protocols, func(proto, dir string) error {
				if dir != filepath.Join(out, proto) {
					t.Errorf("%s's sweep in %s", proto, dir)
				}
				ran = append(ran, proto)
				writeSweep(t, dir, []string{"s1", "s2"}, tc.failed)
				return tc.errs[proto]
			}, status)
			if fmt.Sprint(err) != fmt.Sprint(tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if !slices.Equal(ran, tc.ran) {
				t.Errorf("ran %v, want %v", ran, tc.ran)
			}
			if len(sw.Dirs) != len(tc.ran) || len(sw.Steps) != 2*len(tc.ran) {
				t.Errorf("dirs %v, %d steps; want one sweep of 2 steps per protocol run", sw.Dirs, len(sw.Steps))
			}
			if err != nil {
				return
			}
			if !slices.Equal(sw.Failed, tc.failIDs) {
				t.Errorf("failed %q, want %q", sw.Failed, tc.failIDs)
			}
			got, line := sw.Exit()
			if got != tc.exit {
				t.Errorf("exit %v, want %v", got, tc.exit)
			}
			if want := ""; len(tc.failIDs) > 0 {
				want = fmt.Sprintf("%d of %d steps failed: %s", len(tc.failIDs), len(sw.Steps), strings.Join(tc.failIDs, ", "))
				if line != want {
					t.Errorf("line %q, want %q", line, want)
				}
			} else if line != want {
				t.Errorf("line %q with no failed step", line)
			}
		})
	}
}

// TestCheckResume: a resume of a lab needs a sweep of one of its
// protocols in out.
func TestCheckResume(t *testing.T) {
	out := t.TempDir()
	writeSweep(t, filepath.Join(out, "tcp-crr"), []string{"s1"}, nil)
	if err := os.MkdirAll(filepath.Join(out, "tcp-rr"), 0o755); err != nil { // a directory, no sweep
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out       string
		protocols []string
		want      string
	}{
		{out, []string{"tcp-rr", "tcp-crr"}, "<nil>"},
		{out, []string{"tcp-crr"}, "<nil>"},
		{out, []string{"tcp-rr", "tcp-stream"}, "--resume: " + out + " holds no lab (no tcp-rr/manifest.json): drop --resume to start one there"},
		{filepath.Join(out, "tcp-crr"), []string{"tcp-crr"}, "--resume: " + filepath.Join(out, "tcp-crr") + " holds no lab (no tcp-crr/manifest.json): drop --resume to start one there"},
	} {
		if got := fmt.Sprint(CheckResume(tc.out, tc.protocols)); got != tc.want {
			t.Errorf("CheckResume(%s, %v) = %q, want %q", tc.out, tc.protocols, got, tc.want)
		}
	}
}

// TestSweepDir: a lab keeps each protocol's sweep in a directory of out
// named for the protocol, which is how the readers of a directory of
// sweeps (store.SweepDirs: loadgen report, compare, study) name them.
func TestSweepDir(t *testing.T) {
	for _, tc := range []struct{ out, protocol, want string }{
		{"results/cni", "tcp-rr", "results/cni/tcp-rr"},
		{"results/cni/", "http", "results/cni/http"},
		{"/tmp/lab", "udp-stream", "/tmp/lab/udp-stream"},
		{".", "h2", "h2"},
	} {
		if got := SweepDir(tc.out, tc.protocol); got != tc.want {
			t.Errorf("SweepDir(%q, %q) = %q, want %q", tc.out, tc.protocol, got, tc.want)
		}
	}
	out := t.TempDir()
	protocols := []string{"tcp-rr", "http", "tcp-crr"}
	for _, p := range protocols {
		writeSweep(t, SweepDir(out, p), []string{"s1"}, nil)
	}
	got, err := store.SweepDirs(out)
	if want := slices.Sorted(slices.Values(protocols)); err != nil || !slices.Equal(got, want) {
		t.Errorf("store.SweepDirs of the lab's -o = %q, %v; want %q", got, err, want)
	}
}
