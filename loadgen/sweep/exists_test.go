package sweep

import (
	"os"
	"path/filepath"
	"testing"
)

// A directory holds a sweep once its manifest is there: not when missing,
// empty, or holding only steps; and Check refuses it without Resume.
func TestExists(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, dir string
		make      func(string)
		want      bool
	}{
		{"missing", filepath.Join(dir, "none"), func(string) {}, false},
		{"empty", filepath.Join(dir, "empty"), func(d string) { os.MkdirAll(d, 0o755) }, false},
		{"steps only", filepath.Join(dir, "steps"), func(d string) { os.MkdirAll(filepath.Join(d, StepsDir), 0o755) }, false},
		{"a manifest", filepath.Join(dir, "sweep"), func(d string) {
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, ManifestFile), []byte("{}"), 0o644)
		}, true},
	} {
		tc.make(tc.dir)
		if got := Exists(tc.dir); got != tc.want {
			t.Errorf("%s: Exists = %v, want %v", tc.name, got, tc.want)
		}
		r := &Runner{Spec: &Spec{}, Dir: tc.dir}
		if err := r.Check(); (err != nil) != tc.want {
			t.Errorf("%s: Check() = %v, want refused %v", tc.name, err, tc.want)
		}
		r.Resume = true
		if err := r.Check(); err != nil {
			t.Errorf("%s: Check() with Resume = %v", tc.name, err)
		}
	}
}
