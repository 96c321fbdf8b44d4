package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Standard output has one spelling per alias, and CheckWritable takes
// each as the caller's to write (never opened, so never replaced).
func TestIsStdout(t *testing.T) {
	for path, want := range map[string]bool{"-": true, "/dev/stdout": true, "/dev/fd/1": true, "/proc/self/fd/1": true,
		"/dev/stderr": false, "/dev/fd/2": false, "out.json": false, "": false, "./-": false} {
		if IsStdout(path) != want {
			t.Errorf("IsStdout(%q) = %v, want %v", path, !want, want)
		}
		if want {
			if err := CheckWritable(path); err != nil {
				t.Errorf("CheckWritable(%q): %v", path, err)
			}
		}
	}
}

// A command's outputs: at most one to standard output, none naming a
// file another names, each writable; two to /dev/null are not one file.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.xml")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		outs     []Output
		toStdout bool
		err      string
	}{
		{"none", []Output{{"--json", ""}, {"--hlog", ""}}, false, ""},
		{"two files", []Output{{"--json", a}, {"--junit", b}}, false, ""},
		{"one to stdout", []Output{{"--json", "-"}, {"--junit", b}}, true, ""},
		{"/dev/stdout is stdout", []Output{{"--json", "/dev/stdout"}}, true, ""},
		{"two to stdout", []Output{{"--json", "-"}, {"--junit", "/dev/fd/1"}}, false, "--json and --junit both write to standard output"},
		{"one path twice", []Output{{"--json", a}, {"--hlog", a}}, false, "--json and --hlog both name " + a},
		{"a link to another", []Output{{"--json", a}, {"--hlog", link}}, false, "--json and --hlog both name " + link},
		{"two to /dev/null", []Output{{"--json", os.DevNull}, {"--hlog", os.DevNull}}, false, ""},
		{"no directory", []Output{{"--json", filepath.Join(dir, "none", "x.json")}}, false, "--json: cannot write"},
		{"a directory", []Output{{"--junit", dir}}, false, "--junit: cannot write " + dir + ": it is a directory"},
	} {
		to, err := CheckOutputs(tc.outs...)
		if to != tc.toStdout || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: toStdout %v, %v; want %v, %q", tc.name, to, err, tc.toStdout, tc.err)
		}
	}
}

// A results directory: an existing one written in, a missing one made
// under an existing parent, nothing left behind either way; a file, or a
// file on the way, refused.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, err string
	}{
		{"an existing directory", dir, ""},
		{"a new one", filepath.Join(dir, "new"), ""},
		{"new ones", filepath.Join(dir, "a", "b", "c"), ""},
		{"a file", file, "it is a file, not a directory"},
		{"a file on the way", filepath.Join(file, "sub"), file + " is a file, not a directory"},
	} {
		err := CheckDir(tc.dir)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) || (err != nil && strings.Contains(err.Error(), tc.dir+":")) {
			t.Errorf("%s: %v, want %q (without the path: the caller names it)", tc.name, err, tc.err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
