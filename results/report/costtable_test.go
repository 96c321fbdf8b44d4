package report

import (
	"bytes"
	"strings"
	"testing"

	"loadgen/results"
)

// TestCostTable: a study's cost table has the sizing table's cost
// columns, headed alike, a row per worker count ("–" per 1k req/s without
// a keep-alive figure).
func TestCostTable(t *testing.T) {
	rows := []SizingRow{{Workers: 1, HasRPS: true, RPS: 12000}, {Workers: 4, HasRPS: true, RPS: 40000}, {Workers: 8}}
	var b bytes.Buffer
	if err := CostTable(&b, rows, 30); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"  workers  cost/month  per 1k req/s",
		"        1       30.00          2.50",
		"        4      120.00          3.00",
		"        8      240.00             –",
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i := range want {
		if strings.TrimRight(lines[i], " ") != want[i] {
			t.Errorf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}
	// The same head as the sizing table's cost columns.
	var s bytes.Buffer
	step := &results.Step{Path: "nginx-w1", Workers: 1, Rung: "c1t1", Connections: 1, Run: &results.Run{Config: results.Config{Protocol: "http1"}, Summary: results.Summary{RPS: 100}}}
	if err := SizingTable(&s, []*results.Step{step}, 30); err != nil {
		t.Fatal(err)
	}
	if head := strings.Fields(strings.SplitN(s.String(), "\n", 2)[0]); strings.Join(head[len(head)-4:], " ") != "cost/month per 1k req/s" {
		t.Errorf("the sizing table's cost head: %q", head)
	}
}
