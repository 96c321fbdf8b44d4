package study

import (
	"bytes"
	"reflect"
	"testing"

	"loadgen/results/report"
)

// A study's results are every published table per measured set, headed
// with where the set was measured when there are several or it says
// where; the orderings contention leaves undecided are collected over
// all of them, set by set, table by table.
func TestResults(t *testing.T) {
	pub, ok, err := PublishedFor("flannel-backends")
	if err != nil || !ok || len(pub.Tables) == 0 {
		t.Fatalf("flannel-backends' published figures: %v, %v", ok, err)
	}
	figs := map[string][]float64{
		"host-gw.node-node":          {15, 15.2, 14.9},
		"host-gw.pod-pod-other-node": {12, 12.1, 11.8},
		"vxlan.pod-pod-other-node":   {10, 10.4, 9.9},
		"udp.pod-pod-other-node":     {2, 2.1, 1.9},
	}
	quiet := measuredFrom("/q", []*report.Sweep{labSweep("/q", "tcp-stream", figs)})
	s := labSweep("/b", "tcp-stream", figs)
	busy(s, "vxlan.pod-pod-other-node", 1.9)
	busy(s, "host-gw.pod-pod-other-node", 0.2)
	contended := measuredFrom("/b", []*report.Sweep{s})
	ordering := "vxlan below host-gw on " + pub.Tables[0].Metric

	for _, tc := range []struct {
		name      string
		sets      []Set
		where     []string
		headed    []bool
		contended []string
	}{
		{"the study's own plan", []Set{{M: quiet}}, []string{""}, []bool{false}, nil},
		{"a cluster alone", []Set{{Where: ClusterWhere, M: quiet}}, []string{ClusterWhere}, []bool{true}, nil},
		{"the lab's, contended", []Set{{M: contended}}, []string{""}, []bool{false}, []string{ordering}},
		{"the lab's and a cluster's", []Set{{Where: LabWhere, M: quiet}, {Where: ClusterWhere, M: contended}},
			[]string{LabWhere, ClusterWhere}, []bool{true, true}, []string{ordering}},
		{"several with no where", []Set{{M: quiet}, {M: quiet}}, []string{"", ""}, []bool{true, true}, nil},
		{"contended in each", []Set{{Where: LabWhere, M: contended}, {Where: ClusterWhere, M: contended}},
			[]string{LabWhere, ClusterWhere}, []bool{true, true}, []string{ordering, ordering}},
		{"none measured", nil, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := compareSets(pub, tc.sets)
			if len(got) != len(tc.sets) {
				t.Fatalf("%d results for %d sets", len(got), len(tc.sets))
			}
			for i, r := range got {
				if r.Where != tc.where[i] || r.Headed != tc.headed[i] {
					t.Errorf("set %d: where %q headed %v, want %q %v", i, r.Where, r.Headed, tc.where[i], tc.headed[i])
				}
				if len(r.Tables) != len(pub.Tables) {
					t.Errorf("set %d: %d tables, want the %d published", i, len(r.Tables), len(pub.Tables))
				}
				for j, tb := range r.Tables {
					var got, want bytes.Buffer
					if err := tb.Write(&got); err != nil {
						t.Fatal(err)
					}
					if err := Compare(pub, pub.Tables[j], tc.sets[i].M).Write(&want); err != nil {
						t.Fatal(err)
					}
					if got.String() != want.String() {
						t.Errorf("set %d, table %d: not Compare's of the set:\n%s\nwant\n%s", i, j, got.String(), want.String())
					}
				}
			}
			if c := got.Contended(); !reflect.DeepEqual(c, tc.contended) {
				t.Errorf("Contended = %q, want %q", c, tc.contended)
			}
		})
	}
}
