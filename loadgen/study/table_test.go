package study

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestTableFor: a study of paths prints its step's table, published
// figures or not; another its comparison when its figures are in the
// repository, else its own tables alone.
func TestTableFor(t *testing.T) {
	for _, tc := range []struct {
		paths, published bool
		want             TableKind
	}{
		{false, true, TableCompared},
		{false, false, TableOurs},
		{true, false, TablePaths},
		{true, true, TablePaths},
	} {
		if got := (Study{PathsTable: tc.paths}).TableFor(tc.published); got != tc.want {
			t.Errorf("PathsTable %v, published %v: %v, want %v", tc.paths, tc.published, got, tc.want)
		}
	}
	for _, s := range All() {
		_, ok, err := s.Published()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.TableFor(ok); (got == TablePaths) != (s.Name == "k8s-paths") {
			t.Errorf("study %s: table %v", s.Name, got)
		}
	}
}

// TestPathsDir: k8s-paths' results are in its step's directory under the
// study's.
func TestPathsDir(t *testing.T) {
	s, err := Lookup("k8s-paths")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.PathsDir("out", Options{}), filepath.Join("out", "k8s-paths"); got != want {
		t.Errorf("PathsDir = %q, want %q", got, want)
	}
}

func TestCheckBounds(t *testing.T) {
	const refused = "-d must not be negative and --cpus at least 1"
	for _, tc := range []struct {
		d    time.Duration
		cpus int
		want string
	}{
		{0, 1, "<nil>"},
		{time.Second, 8, "<nil>"},
		{-time.Second, 1, refused},
		{0, 0, refused},
		{time.Second, -2, refused},
	} {
		if got := fmt.Sprint(Options{Duration: tc.d, CPUs: tc.cpus}.CheckBounds()); got != tc.want {
			t.Errorf("-d %v --cpus %d: %s, want %s", tc.d, tc.cpus, got, tc.want)
		}
	}
}
