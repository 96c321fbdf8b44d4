package run

import (
	"strings"
	"testing"

	"loadgen/meshes/k8s"
)

// TestScheduleHint checks that a worker the scheduler could not place, for
// the rule that keeps it off the target's node or for a placement flag, gets
// the flag to change; other failures get nothing.
func TestScheduleHint(t *testing.T) {
	pending := "worker 1 (pod p) had not started by the start instant: Pending (Unschedulable: 0/3 nodes are available: "
	sel := k8s.Options{WorkerNodeSelector: map[string]string{"node-role": "load"}}
	for _, tc := range []struct {
		failed string
		o      k8s.Options
		want   string
	}{
		{pending + "1 node(s) didn't match pod anti-affinity rules.)", k8s.Options{}, "--same-node-ok"},
		{pending + "1 node(s) didn't match pod anti-affinity rules.)", k8s.Options{SameNodeOK: true}, ""},
		{pending + "3 node(s) didn't match Pod's node affinity/selector.)", sel, "--worker-node-selector"},
		{pending + "1 node(s) had untolerated taint {dedicated: load}.)", k8s.Options{}, "--worker-toleration"},
		{"worker 0 (pod p) failed: exit code 1", k8s.Options{}, ""},
	} {
		got := scheduleHint(tc.failed, tc.o)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%q: hint %q, want %q", tc.failed, got, tc.want)
		}
	}
}
