package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
)

// writeSweeps writes a directory of sweeps, one per name.
func writeSweeps(t *testing.T, sweeps map[string][]*results.Step) string {
	t.Helper()
	root := t.TempDir()
	for name, steps := range sweeps {
		if err := os.Rename(writeSweep(t, steps), filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSubSweeps(t *testing.T) {
	one := func(path string, rps, p99 float64) []*results.Step {
		return []*results.Step{step(path, "c1t1", 100, 1, rps, p99)}
	}
	for _, tc := range []struct {
		name  string
		a, b  map[string][]*results.Step
		names []string
		subs  string // each sweep: name, or name! when missing in b
		rows  string // the first row's step of each sweep, in all
		err   string
	}{
		{"every sweep", map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)},
			map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 500, 20)},
			[]string{"h1", "h2"}, "h1 h2", "h1 nginx c1t1 100B,h2 nginx c1t1 100B", ""},
		{"one missing in b", map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)},
			map[string][]*results.Step{"h2": one("nginx", 1000, 10)},
			[]string{"h1", "h2"}, "h1! h2", "h2 nginx c1t1 100B", ""},
		{"names chosen", map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)},
			map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)},
			[]string{"h2"}, "h2", "h2 nginx c1t1 100B", ""},
		{"nothing matched", map[string][]*results.Step{"h1": one("nginx", 1000, 10)},
			map[string][]*results.Step{"h1": one("envoy", 1000, 10)},
			[]string{"h1"}, "h1", "h1 nginx c1t1 100B,h1 envoy c1t1 100B", "nothing to compare: no sweep of "},
		{"every sweep missing", map[string][]*results.Step{"h1": one("nginx", 1000, 10)},
			map[string][]*results.Step{"h2": one("nginx", 1000, 10)},
			[]string{"h1"}, "h1!", "", "nothing to compare: no sweep of "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := writeSweeps(t, tc.a), writeSweeps(t, tc.b)
			subs, all, err := SubSweeps(a, b, tc.names, Options{MaxRegression: 0.10})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			var got []string
			for _, s := range subs {
				n := s.Name
				if s.Missing {
					n += "!"
				} else if s.C.A != filepath.Join(a, s.Name) || s.C.B != filepath.Join(b, s.Name) {
					t.Errorf("%s compared %s with %s", s.Name, s.C.A, s.C.B)
				}
				got = append(got, n)
			}
			if g := strings.Join(got, " "); g != tc.subs {
				t.Errorf("sweeps %q, want %q", g, tc.subs)
			}
			seen := map[string]bool{}
			var rows []string
			for _, r := range all.Rows {
				if !seen[r.Step] {
					seen[r.Step] = true
					rows = append(rows, r.Step)
				}
			}
			if g := strings.Join(rows, ","); g != tc.rows {
				t.Errorf("rows' steps %q, want %q", g, tc.rows)
			}
		})
	}
}
