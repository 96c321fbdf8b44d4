package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"loadgen/results"
)

// withHops is the fixture sweep as a run over a chain of hops targets
// records it: its manifest's spec says so.
func withHops(t *testing.T, hops int) *Sweep {
	s := fixtureSweep(t)[0]
	m := *s.Manifest
	spec := map[string]any{}
	if err := json.Unmarshal(m.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	spec["hops"] = hops
	m.Spec, _ = json.Marshal(spec)
	s.Manifest = &m
	return s
}

// medianP of the runs of path at a step, read from the steps themselves.
func medianP(steps []*results.Step, path string, c *Cell, p func(results.Latency) results.Duration) float64 {
	var xs []float64
	for _, st := range steps {
		if st.Path == path && st.Rung == c.Rung && st.Payload == c.Payload && st.Rate == c.Rate && st.Run != nil && st.Run.Summary.Requests > 0 {
			xs = append(xs, float64(p(st.Run.Summary.Latency)))
		}
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// TestPerHopColumns checks that over a chain of 3 targets, the table has the
// added p50 and p99 per hop — (path − baseline)/3, read here from the steps —
// and the proxies' CPU per hop; over one target it has none.
func TestPerHopColumns(t *testing.T) {
	one := fixtureSweep(t)[0]
	if one.Hops() != 1 {
		t.Fatalf("a manifest without hops: %d, want 1", one.Hops())
	}
	if out := sweepTable(t, one, TableOptions{Wide: true}); strings.Contains(out, "/hop") {
		t.Errorf("one hop, yet per-hop columns:\n%s", out)
	}
	s := withHops(t, 3)
	if s.Hops() != 3 {
		t.Fatalf("Hops() = %d, want 3", s.Hops())
	}
	base := s.Baseline()
	tb := newTable(base, s.Steps, s.Hops())
	col := func(key string) int {
		i := slices.IndexFunc(tb.cols, func(c column) bool { return c.key == key })
		if i < 0 {
			t.Fatalf("no column %s", key)
		}
		return i
	}
	p50, p99, cpu := col("+p50/hop"), col("+p99/hop"), col("proxy cpu/hop")
	checked, proxies := 0, 0
	for _, b := range tb.blocks {
		for i, c := range b.cells {
			st := b.stats[i]
			if c.Path == base || !st.HasAdded || !st.Answered {
				continue
			}
			want50 := (medianP(s.Steps, c.Path, c, func(l results.Latency) results.Duration { return l.P50 }) -
				medianP(s.Steps, base, c, func(l results.Latency) results.Duration { return l.P50 })) / 3
			want99 := (medianP(s.Steps, c.Path, c, func(l results.Latency) results.Duration { return l.P99 }) -
				medianP(s.Steps, base, c, func(l results.Latency) results.Duration { return l.P99 })) / 3
			if got := b.rows[i][p50]; got != delta(want50) {
				t.Errorf("%s %s: +p50/hop %q, want %q", c.Path, c.Rung, got, delta(want50))
			}
			if got := b.rows[i][p99]; got != delta(want99) {
				t.Errorf("%s %s: +p99/hop %q, want %q", c.Path, c.Rung, got, delta(want99))
			}
			if st.HasProxy {
				got, err1 := strconv.ParseFloat(b.rows[i][cpu], 64)
				whole, err2 := strconv.ParseFloat(b.rows[i][col("proxy cpu")], 64)
				if err1 != nil || err2 != nil || math.Abs(got-whole/3) > 0.01 {
					t.Errorf("%s %s: proxy cpu/hop %q beside proxy cpu %q, want a third", c.Path, c.Rung, b.rows[i][cpu], b.rows[i][col("proxy cpu")])
				}
				proxies++
			}
			checked++
		}
	}
	if checked == 0 || proxies == 0 {
		t.Fatalf("%d cells with an added figure, %d with a proxy in the fixture", checked, proxies)
	}
	// The Markdown report reads the hops from the manifest.
	md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, []*Sweep{s}, Options{Wide: true}) }))
	if !strings.Contains(md, "+p99/hop") || !strings.Contains(md, "each request crosses 3 targets") {
		t.Errorf("the Markdown report has no per-hop figures:\n%s", md)
	}
}

// TestCSVHops checks that a chain's CSV says how many hops each row crossed,
// in a last column; a CSV of no chain has none.
func TestCSVHops(t *testing.T) {
	read := func(sweeps ...*Sweep) [][]string {
		b := render(t, func(b *bytes.Buffer) error { return CSV(b, sweeps) })
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if rows := read(fixtureSweep(t)[0]); slices.Contains(rows[0], "hops") {
		t.Errorf("one hop, yet a hops column: %v", rows[0])
	}
	rows := read(withHops(t, 3), fixtureSweep(t)[0])
	last := len(rows[0]) - 1
	if rows[0][last] != "hops" {
		t.Fatalf("header %v: want hops last", rows[0])
	}
	n := len(fixtureSweep(t)[0].Steps)
	for i, r := range rows[1:] {
		want := "3"
		if i >= n {
			want = "1"
		}
		if len(r) != len(rows[0]) || r[last] != want {
			t.Fatalf("row %d: %d columns, hops %q, want %d and %s", i+1, len(r), r[last], len(rows[0]), want)
		}
	}
}
