package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadFiles takes run files, each once, and refuses the rest before
// decoding any more.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	var good []string
	for _, name := range []string{"w0.json", "w1.json"} {
		b, err := os.ReadFile(filepath.Join("..", "store", "testdata", "schema2", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		good = append(good, p)
	}
	w0, w1 := good[0], good[1]
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(w0, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	notRun := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(notRun, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.json")
	for _, tc := range []struct {
		name  string
		paths []string
		err   string // "" for the runs read, one per path
	}{
		{"two runs", []string{w0, w1}, ""},
		{"one run", []string{w1}, ""},
		{"missing", []string{w0, missing}, missing + " does not exist"},
		{"a directory", []string{w0, sub}, sub + " is a directory: merge takes run files (loadgen run --json) or a sweep's steps/*.json"},
		{"the same path twice", []string{w0, w1, w0}, w0 + " and " + w0 + " are the same file: give each generator's run once"},
		{"the same path spelt twice", []string{w0, dir + "/./w0.json"}, w0 + " and " + dir + "/./w0.json are the same file"},
		{"a link to it", []string{w0, link}, w0 + " and " + link + " are the same file"},
		{"not a run", []string{w0, notRun}, notRun + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ReadFiles(tc.paths)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) || in != nil {
					t.Fatalf("ReadFiles = %d runs, %v; want an error saying %q", len(in), err, tc.err)
				}
				return
			}
			if err != nil || len(in) != len(tc.paths) {
				t.Fatalf("ReadFiles = %d runs, %v; want %d", len(in), err, len(tc.paths))
			}
			for i, x := range in {
				if x.Source != tc.paths[i] || x.Run == nil || x.Run.Summary.Requests == 0 {
					t.Errorf("input %d: %s, %+v", i, x.Source, x.Run)
				}
			}
		})
	}
}
