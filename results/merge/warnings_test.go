package merge

import (
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// TestMergeWarnings: the warnings a merge's output gives are apart from
// the run's notes that only record: the skew that --allow-skew let
// through is one (and a note too); windows that agree give none, and a
// worker's own note, even one of an earlier skewed merge, a saturated
// worker or labels left out are notes only.
func TestMergeWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		late   time.Duration
		allow  bool
		change func(in []Input)
		want   []string // each warning's beginning
	}{
		{"same window", 0, false, nil, nil},
		{"within the limit", time.Second, false, nil, nil},
		{"within the limit, skew allowed", time.Second, true, nil, nil},
		{"skew allowed", 2 * time.Second, true, nil, []string{
			"the measured windows were skewed (merged, skew allowed): measured together for 8s of the shortest window's 10s (80.0%), starts 2s apart, ends 2s apart; RPS is the sum"}},
		{"a worker's own skew note", 0, false, func(in []Input) {
			in[0].Run.Notes = []string{skewNote + " (merged, skew allowed): measured together for 8s of the shortest window's 10s (80.0%)"}
		}, nil},
		{"a saturated worker", 0, false, func(in []Input) {
			in[1].Run.Generator = results.Cost{CPUSeconds: 19, CPUs: 2, Utilization: 0.95, Saturated: true}
		}, nil},
		{"labels not alike", 0, false, func(in []Input) {
			in[0].Run.Labels = results.Labels{"zone": "a"}
			in[1].Run.Labels = results.Labels{"zone": "b"}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := twoRuns(t, tc.late)
			if tc.change != nil {
				tc.change(in)
			}
			m, err := Merge(in, Options{AllowSkew: tc.allow})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Warnings) != len(tc.want) {
				t.Fatalf("warnings %q, want %d beginning %q", m.Warnings, len(tc.want), tc.want)
			}
			for i, w := range m.Warnings {
				if !strings.HasPrefix(w, tc.want[i]) {
					t.Errorf("warning %q, want it to begin %q", w, tc.want[i])
				}
				if !slices.Contains(m.Run.Notes, w) {
					t.Errorf("warning %q is not among the run's notes %q", w, m.Run.Notes)
				}
			}
			if len(m.Workers) != len(in) || m.Run.Summary.Requests != 40000 {
				t.Errorf("%d workers, %d requests: want %d and 40000", len(m.Workers), m.Run.Summary.Requests, len(in))
			}
		})
	}
}
