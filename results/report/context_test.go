package report

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"loadgen/results"
)

// TestClusterContextCosts checks that a cluster step's control plane and
// nodes are columns of their own (cp cpu, node cpu), never in what a path
// adds (+cpu, +MiB): a node's figure holds every pod on it, the generator's
// too. An unmeasured control plane (none where the run looked) leaves
// the path's added figures as they were.
func TestClusterContextCosts(t *testing.T) {
	plain := fixtureSweep(t)[0]
	s := fixtureSweep(t)[0]
	for _, st := range s.Steps {
		st.Watched = append(slices.Clone(st.Watched),
			results.ProcessCost{Name: "node/n1", Role: results.RoleNode, CPUMean: 1.7, MemMean: 3 << 30, Samples: 4, Processes: 1},
			results.ProcessCost{Name: "node/n2", Role: results.RoleNode, CPUMean: 0.3, MemMean: 1 << 30, Samples: 4, Processes: 1},
			results.ProcessCost{Name: "istiod", Role: results.RoleControlPlane, CPUMean: 0.05, MemMean: 90 << 20, Samples: 4, Processes: 1})
	}
	base := s.Baseline()
	tb, was := newTable(base, s.Steps, 1), newTable(base, plain.Steps, 1)
	col := func(tb *table, key string) int {
		i := slices.IndexFunc(tb.cols, func(c column) bool { return c.key == key })
		if i < 0 {
			t.Fatalf("no column %s", key)
		}
		return i
	}
	checked := 0
	for bi, b := range tb.blocks {
		for i := range b.cells {
			st := b.stats[i]
			if !st.HasNode || !st.HasControlPlane {
				t.Fatalf("%s %s: no node or control-plane figure: %+v", b.cells[i].Path, b.cells[i].Rung, st)
			}
			node, err1 := strconv.ParseFloat(b.rows[i][col(tb, "node cpu")], 64)
			cp, err2 := strconv.ParseFloat(b.rows[i][col(tb, "cp cpu")], 64)
			if err1 != nil || err2 != nil || math.Abs(node-2.0) > 0.005 || math.Abs(cp-0.05) > 0.005 {
				t.Errorf("node cpu %q, cp cpu %q: want both nodes' 2.00 and istiod's 0.05", b.rows[i][col(tb, "node cpu")], b.rows[i][col(tb, "cp cpu")])
			}
			for _, key := range []string{"+cpu", "+MiB", "proxy cpu", "target cpu"} {
				if got, want := b.rows[i][col(tb, key)], was.blocks[bi].rows[i][col(was, key)]; got != want {
					t.Errorf("%s %s: %s %q with the node and control plane, %q without", b.cells[i].Path, b.cells[i].Rung, key, got, want)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no cell checked")
	}
	// istiod not found: unmeasured, and the added figures stay.
	for _, st := range s.Steps {
		for i := range st.Watched {
			if st.Watched[i].Role == results.RoleControlPlane {
				st.Watched[i] = results.ProcessCost{Name: "istiod", Role: results.RoleControlPlane, Unmeasured: "no pod matches app=istiod in namespace istio-system"}
			}
		}
	}
	tb = newTable(base, s.Steps, 1)
	for bi, b := range tb.blocks {
		for i := range b.cells {
			if got, want := b.rows[i][col(tb, "+cpu")], was.blocks[bi].rows[i][col(was, "+cpu")]; got != want {
				t.Errorf("%s %s: +cpu %q with istiod unmeasured, %q without it", b.cells[i].Path, b.cells[i].Rung, got, want)
			}
		}
	}
}
