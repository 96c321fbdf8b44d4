package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Stream creates its file at its first write: a command that stops
// before leaves what was there; Commit writes everything, Discard drops
// the buffered rest; "-" is standard output, never a file named "-".
func TestCreateOnWrite(t *testing.T) {
	big := strings.Repeat("x", 10000) // past the buffer: the file opens before Commit
	for _, tc := range []struct {
		name     string
		path     string // under the test's directory; "-" is standard output
		existing string // the file's content before, "" for no file
		write    []string
		commit   bool
		want     string // the file's content after ("" with existing "": no file)
		stdout   string
	}{
		{"nothing written, committed", "log.hlog", "", nil, true, "", ""},
		{"nothing written: an existing file stays", "log.hlog", "earlier run\n", nil, false, "earlier run\n", ""},
		{"buffered, discarded: an existing file stays", "log.hlog", "earlier run\n", []string{"interval\n"}, false, "earlier run\n", ""},
		{"committed: the file emptied, then written", "log.hlog", "earlier run\n", []string{"interval\n"}, true, "interval\n", ""},
		{"a new file", "log.hlog", "", []string{"interval\n"}, true, "interval\n", ""},
		{"killed midway: what went out stays", "log.hlog", "earlier run\n", []string{big, "rest"}, false, big, ""},
		{"standard output", "-", "", []string{"interval\n"}, true, "", "interval\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir) // where a file named "-" would be made
			path := tc.path
			if path != "-" {
				path = filepath.Join(dir, tc.path)
			}
			if tc.existing != "" {
				if err := os.WriteFile(path, []byte(tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stdout bytes.Buffer
			s := CreateOnWrite(path, &stdout)
			for _, w := range tc.write {
				if _, err := s.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.commit {
				if err := s.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			s.Discard()
			if stdout.String() != tc.stdout {
				t.Errorf("standard output %q, want %q", stdout.String(), tc.stdout)
			}
			if path == "-" {
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					t.Errorf("files made for -: %v", entries)
				}
				return
			}
			b, err := os.ReadFile(path)
			switch {
			case tc.existing == "" && tc.write == nil && !os.IsNotExist(err):
				t.Errorf("a file made with nothing written (%v)", err)
			case tc.existing == "" && tc.write == nil:
			case err != nil:
				t.Fatal(err)
			case string(b) != tc.want:
				t.Errorf("the file holds %d bytes %.20q…, want %d", len(b), b, len(tc.want))
			}
		})
	}
}

// A first write that cannot open the file is the stream's error, at
// Commit too, naming the path.
func TestCreateOnWriteError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "log.hlog")
	s := CreateOnWrite(path, nil)
	s.Write([]byte("interval\n"))
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Commit: %v, want an error naming %s", err, path)
	}
	s.Discard()
}
