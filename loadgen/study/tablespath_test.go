package study

import (
	"os"
	"path/filepath"
	"testing"
)

// Tables finds no study, and no error, where `loadgen report` may be given
// something else: a run's file, a directory without a study's marker.
func TestTablesOfWhatIsNoStudy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"a run's file", file},
		{"a directory with no marker", dir},
		{"nothing there", filepath.Join(dir, "missing")},
	} {
		tables, ok, err := Tables(tc.path)
		if err != nil || ok || tables != nil {
			t.Errorf("%s: Tables(%s) = %v, %v, %v, want none, false, nil", tc.name, tc.path, tables, ok, err)
		}
	}
}
