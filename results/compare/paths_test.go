package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// compare's flags: --noise must be more than 0, and the errors name the
// flag they are about.
func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		maxReg, noise string
		want          Options
		err           string
	}{
		{"10%", "5%", Options{Noise: 0.05, MaxRegression: 0.10}, ""},
		{"0", "1", Options{Noise: 0.01}, ""},
		{"10%", "0%", Options{}, "--noise 0%: must be more than 0%"},
		{"10%", "0", Options{}, "--noise 0: must be more than 0%"},
		{"10%", "-5%", Options{}, `--noise: "-5%" is negative: want a percentage like 10%`},
		{"10%", "x", Options{}, `--noise: "x" is not a percentage: want e.g. 10%`},
		{"x", "0", Options{}, `--max-regression: "x" is not a percentage: want e.g. 10%`},
	} {
		got, err := ParseOptions(tc.maxReg, tc.noise)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err || err == nil && got != tc.want {
			t.Errorf("ParseOptions(%q, %q) = %+v, %q; want %+v, %q", tc.maxReg, tc.noise, got, msg, tc.want, tc.err)
		}
	}
}

// What compare A B compares: runs with runs, sweeps with sweeps,
// directories of sweeps sweep by sweep; and what it refuses.
func TestPaths(t *testing.T) {
	dir := t.TempDir()
	runFile := func(name string, rps, p99 float64) string {
		p := filepath.Join(dir, name)
		if err := store.WriteRun(p, runOf(rps, p99)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := func(path string, rps, p99 float64) []*results.Step {
		return []*results.Step{step(path, "c1t1", 100, 1, rps, p99)}
	}
	runA, runB := runFile("a.json", 1000, 10), runFile("b.json", 1000, 10)
	sweepA, sweepB := sweepPair(t)
	other := writeSweep(t, one("envoy", 1000, 10))
	labA := writeSweeps(t, map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)})
	labB := writeSweeps(t, map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 500, 20)})
	labOther := writeSweeps(t, map[string][]*results.Step{"h1": one("envoy", 1000, 10)})
	// h2 of labBad cannot be read: h1's comparison comes with the error.
	labBad := writeSweeps(t, map[string][]*results.Step{"h1": one("nginx", 1000, 10), "h2": one("nginx", 1000, 10)})
	bad := filepath.Join(labBad, "h2", store.StepsDir, "nginx_c1t1_100B_closed_r1.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope")
	for _, tc := range []struct {
		name string
		a, b string
		subs string // each sweep compared, sweep by sweep: name, or name! when missing in b; "-" for none (nil)
		rows bool   // C has rows
		err  string // with A and B for a and b
	}{
		{"two runs", runA, runB, "-", true, ""},
		{"two sweeps", sweepA, sweepB, "-", true, ""},
		{"directories of sweeps", labA, labB, "h1 h2", true, ""},
		{"a sweep missing in B", labA, labOther, "h1 h2!", true, "nothing to compare: no sweep of A has a step that ran in B"},
		{"a sweep B cannot read", labA, labBad, "h1", true, bad},
		{"a run and a sweep", runA, sweepB, "-", false, "A is a run file but B is a sweep directory: compare two runs or two sweeps"},
		{"a sweep and a run", sweepA, runB, "-", false, "A is a sweep directory but B is a run file: compare two runs or two sweeps"},
		{"A missing", missing, runB, "-", false, "A does not exist"},
		{"B missing", runA, missing, "-", false, "B does not exist"},
		{"no step matched", sweepA, other, "-", false, "nothing to compare: no step of A ran in B (steps match by "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Paths(tc.a, tc.b, Options{MaxRegression: 0.10})
			want := strings.NewReplacer("A", tc.a, "B", tc.b).Replace(tc.err)
			if tc.err == bad {
				want = bad
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			subs := "-"
			if got.Subs != nil {
				var names []string
				for _, s := range got.Subs {
					n := s.Name
					if s.Missing {
						n += "!"
					}
					names = append(names, n)
				}
				subs = strings.Join(names, " ")
			}
			if subs != tc.subs {
				t.Errorf("sweeps %q, want %q", subs, tc.subs)
			}
			if (len(got.C.Rows) > 0) != tc.rows {
				t.Errorf("%d rows, want some: %v", len(got.C.Rows), tc.rows)
			}
			if tc.subs == "-" && tc.rows && (got.C.A != tc.a || got.C.B != tc.b) {
				t.Errorf("compared %s with %s", got.C.A, got.C.B)
			}
		})
	}
}
