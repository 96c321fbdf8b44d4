package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// saveSweep writes a manifest of spec into dir, as a sweep's first step
// does.
func saveSweep(t *testing.T, dir string, spec *Spec) {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteJSON(filepath.Join(dir, ManifestFile), results.Manifest{Schema: results.SchemaVersion, Kind: "sweep", Spec: b}); err != nil {
		t.Fatal(err)
	}
}

// TestOrigin: what loadgen sweep builds its plan on, for every kind of
// directory with and without --resume, and with and without a plan of its
// own (-f or --path).
func TestOrigin(t *testing.T) {
	root := t.TempDir()
	dirs := map[string]string{"missing": filepath.Join(root, "missing"), "empty": filepath.Join(root, "empty")}
	if err := os.MkdirAll(dirs["empty"], 0o755); err != nil {
		t.Fatal(err)
	}
	for _, builtin := range []string{"", "demo", "size"} {
		s := Demo(false)
		s.Paths[0].URL = "http://127.0.0.1:1"
		s.Builtin = builtin
		dirs["sweep "+builtin] = filepath.Join(root, "sweep-"+builtin)
		saveSweep(t, dirs["sweep "+builtin], s)
	}
	for _, tc := range []struct {
		dir           string
		resume, named bool
		saved         string // the saved plan's Builtin, or "none"
		demo          bool
		err           string
	}{
		{dir: "missing", saved: "none", demo: true},
		{dir: "missing", named: true, saved: "none"},
		{dir: "empty", saved: "none", demo: true},
		{dir: "missing", resume: true, err: "holds no sweep"},
		{dir: "empty", resume: true, err: "holds no sweep"},
		{dir: "missing", resume: true, named: true, saved: "none"}, // the plan checks the directory (CheckResume)
		{dir: "sweep ", err: "already holds a sweep"},
		{dir: "sweep demo", err: "already holds a sweep"},
		{dir: "sweep ", named: true, err: "already holds a sweep"},
		{dir: "sweep ", resume: true, saved: ""},
		{dir: "sweep demo", resume: true, saved: "demo", demo: true},
		{dir: "sweep size", resume: true, err: "holds a loadgen size run: continue it with loadgen size"},
		{dir: "sweep size", resume: true, named: true, saved: "none"},
	} {
		name := fmt.Sprintf("%s resume=%v named=%v", tc.dir, tc.resume, tc.named)
		saved, demo, err := Origin(dirs[tc.dir], tc.resume, tc.named)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want one with %q", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := "none"
		if saved != nil {
			got = saved.Builtin
		}
		if got != tc.saved || demo != tc.demo {
			t.Errorf("%s: saved %q demo %v, want %q %v", name, got, demo, tc.saved, tc.demo)
		}
	}
}

// CheckOut refuses a directory holding a sweep unless the run resumes it,
// with Occupied's text.
func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOut(dir, false); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
	saveSweep(t, dir, &Spec{})
	if err := CheckOut(dir, false); fmt.Sprint(err) != fmt.Sprint(Occupied(dir)) {
		t.Errorf("a sweep's directory: %v, want %v", err, Occupied(dir))
	}
	if err := CheckOut(dir, true); err != nil {
		t.Errorf("a sweep's directory, resumed: %v", err)
	}
}
