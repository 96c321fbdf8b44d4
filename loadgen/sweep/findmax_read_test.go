package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/report"
)

// TestReadBrackets: each find-max directory's bracket, named by its
// directory, in the order given; a single run, a sweep without
// findmax.json are passed over, an unreadable findmax.json is an error.
func TestReadBrackets(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, FindMaxFileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	pass := &Verdict{Rate: 400, OK: true, Probes: 3, Passed: 2}
	a := write("a", FindMaxFile{Schema: results.SchemaVersion, Tool: "loadgen", Searches: []Max{{Path: "nginx", Rung: "c1t1", Payload: 100, Rate: 400, Pass: pass}}})
	b := write("b", FindMaxFile{Schema: results.SchemaVersion, Tool: "loadgen", Interrupted: true, Searches: []Max{{Path: "envoy", Rung: "c4t4", Payload: 1024}}})
	plain := filepath.Join(dir, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &results.Manifest{}
	got, err := ReadBrackets([]*report.Sweep{{Name: a, Manifest: m}, {Name: "run.json"}, {Name: plain, Manifest: m}, {Name: b, Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Dir != a || got[1].Dir != b {
		t.Fatalf("brackets %+v, want a's and b's", got)
	}
	if want := Bracket([]Max{{Path: "nginx", Rung: "c1t1", Payload: 100, Rate: 400, Pass: pass}}, false, results.SchemaVersion); len(got[0].Rows) != 1 || got[0].Rows[0] != want.Rows[0] {
		t.Errorf("a's bracket %+v, want %+v", got[0].Rows, want.Rows)
	}
	if err := os.WriteFile(filepath.Join(plain, FindMaxFileName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBrackets([]*report.Sweep{{Name: plain, Manifest: m}}); err == nil {
		t.Error("a broken findmax.json was read")
	}
}

// TestFindMaxPlanTimes: how long a search and all of them take, from the
// fewest to the most probes, each probe its warm-up and measured window,
// to the second.
func TestFindMaxPlanTimes(t *testing.T) {
	for _, tc := range []struct {
		per                              time.Duration
		searches                         int
		searchLo, searchHi, allLo, allHi time.Duration
	}{
		{10 * time.Second, 2, 150 * time.Second, 350 * time.Second, 300 * time.Second, 700 * time.Second},
		{1300 * time.Millisecond, 3, 20 * time.Second, 46 * time.Second, 59 * time.Second, 137 * time.Second},
		{0, 0, 0, 0, 0, 0},
	} {
		p := FindMaxPlan{PerProbe: tc.per, ProbesLo: 15, ProbesHi: 35, Searches: make([]FindMaxSearch, tc.searches)}
		lo, hi := p.SearchTime()
		alo, ahi := p.TotalTime()
		if lo != tc.searchLo || hi != tc.searchHi || alo != tc.allLo || ahi != tc.allHi {
			t.Errorf("%v × %d: a search %v–%v, all %v–%v; want %v–%v, %v–%v", tc.per, tc.searches, lo, hi, alo, ahi, tc.searchLo, tc.searchHi, tc.allLo, tc.allHi)
		}
	}
}
