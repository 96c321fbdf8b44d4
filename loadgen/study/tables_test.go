package study

import (
	"slices"
	"strings"
	"testing"
)

// TestTableKinds holds what each study's table adds to what its plan
// runs: cost columns to a sizing (a size step), the sidecar sides' rows
// to a sweep of sidecar paths, and its own table to a study of k8s paths
// steps that published no figures.
func TestTableKinds(t *testing.T) {
	for _, s := range All() {
		plan := s.Plan(Options{CPUs: 2, Workers: 1})
		size, sidecars, paths := false, false, len(plan) > 0
		for _, st := range plan {
			size = size || st.Args[0] == "size"
			sidecars = sidecars || slices.ContainsFunc(st.Args, func(a string) bool { return strings.Contains(a, "=sidecar:") })
			paths = paths && len(st.Args) > 1 && st.Args[0] == "k8s" && st.Args[1] == "paths"
		}
		_, published, err := s.Published()
		if err != nil {
			t.Fatal(err)
		}
		if s.CostColumns != size {
			t.Errorf("%s: CostColumns %v, a size step %v", s.Name, s.CostColumns, size)
		}
		if s.SideRows != sidecars {
			t.Errorf("%s: SideRows %v, sidecar paths %v", s.Name, s.SideRows, sidecars)
		}
		if want := paths && !published; s.PathsTable != want {
			t.Errorf("%s: PathsTable %v, want %v (k8s paths steps %v, published figures %v)", s.Name, s.PathsTable, want, paths, published)
		}
	}
}
