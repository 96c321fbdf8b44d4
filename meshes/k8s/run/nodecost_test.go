package run

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cost"
	"loadgen/results"
)

// recordingWatcher is a cost source that notes each watch started and
// stops each with a figure of the watch's name and role.
type recordingWatcher struct {
	mu      sync.Mutex
	started []cost.Watch
}

func (r *recordingWatcher) Start(_ context.Context, w cost.Watch, _ cost.Window) (func() (results.ProcessCost, error), error) {
	r.mu.Lock()
	r.started = append(r.started, w)
	r.mu.Unlock()
	return func() (results.ProcessCost, error) {
		return results.ProcessCost{Name: w.Name, Role: w.Role, CPUMean: 0.1}, nil
	}, nil
}

// TestStepNodeCost checks that a step records the cost of node/NAME for
// exactly the nodes of its targets, its own workers and the proxies' pods —
// not the node of the step before's worker, of a node agent serving none of
// the run's pods, of the control plane or of a pod outside the comparison —
// each once; and none with --no-node-cost.
func TestStepNodeCost(t *testing.T) {
	pod := func(name, ns, node string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	runLabels := func(runID string, extra ...string) map[string]string {
		l := map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: runID}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		o     k8s.Options
		pods  func(runID string) []runtime.Object
		addr  k8s.Addresses // the published address (its Service is among the pods)
		nodes []string
	}{
		{"istio-waypoint", k8s.Options{Mesh: k8s.MeshIstioWaypoint},
			func(id string) []runtime.Object {
				return []runtime.Object{
					pod("loadgen-target-a", "bench", "n1", runLabels(id, k8s.LabelName, k8s.TargetName)),
					pod("loadgen-target-direct-a", "bench", "n1", runLabels(id, k8s.LabelName, k8s.TargetDirectName)),
					pod("lg-3-x", "bench", "n2", runLabels(id, k8s.LabelName, k8s.ClientName, k8s.LabelStep, "3")),
					pod("lg-3-y", "bench", "n3", runLabels(id, k8s.LabelName, k8s.ClientName, k8s.LabelStep, "3")),
					pod("lg-2-old", "bench", "n4", runLabels(id, k8s.LabelName, k8s.ClientName, k8s.LabelStep, "2")),
					pod("waypoint-1", "bench", "n5", map[string]string{"gateway.networking.k8s.io/gateway-name": k8s.WaypointName}),
					pod("ztunnel-1", "istio-system", "n1", map[string]string{"app": "ztunnel"}),
					pod("ztunnel-6", "istio-system", "n6", map[string]string{"app": "ztunnel"}),
					pod("istiod-1", "istio-system", "n7", map[string]string{"app": "istiod"}),
					pod("other-app", "bench", "n8", map[string]string{"app": "other"}),
				}
			}, k8s.Addresses{}, []string{"n1", "n2", "n3", "n5"}},
		{"gateway", k8s.Options{Mesh: k8s.MeshGateway, Class: "eg", ControlPlane: []string{"eg=envoy-gateway-system/control-plane=envoy-gateway"}},
			func(id string) []runtime.Object {
				return []runtime.Object{
					pod("loadgen-target-a", "bench", "n1", runLabels(id, k8s.LabelName, k8s.TargetName)),
					pod("lg-3-x", "bench", "n2", runLabels(id, k8s.LabelName, k8s.ClientName, k8s.LabelStep, "3")),
					pod("lg-2-old", "bench", "n4", runLabels(id, k8s.LabelName, k8s.ClientName, k8s.LabelStep, "2")),
					&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "envoy-bench-gw", Namespace: "envoy-gateway-system"},
						Spec: corev1.ServiceSpec{ClusterIP: "198.18.0.9", ClusterIPs: []string{"198.18.0.9"}, Selector: map[string]string{"app": "envoy-gw"}}},
					pod("envoy-gw-1", "envoy-gateway-system", "n3", map[string]string{"app": "envoy-gw"}),
					pod("envoy-gw-2", "envoy-gateway-system", "n5", map[string]string{"app": "envoy-gw"}),
					pod("envoy-gateway-1", "envoy-gateway-system", "n7", map[string]string{"control-plane": "envoy-gateway"}),
				}
			}, both("198.18.0.9"), []string{"n1", "n2", "n3", "n5"}},
	} {
		for _, noNodeCost := range []bool{false, true} {
			name := tc.name
			if noNodeCost {
				name += "/no-node-cost"
			}
			t.Run(name, func(t *testing.T) {
				o := tc.o
				o.Namespace, o.RunID, o.NoNodeCost = "bench", "r1", noNodeCost
				o, err := o.WithDefaults()
				if err != nil {
					t.Fatal(err)
				}
				rec := &recordingWatcher{}
				k := &Coordinator{Cluster: fakeCluster(t, tc.pods(o.RunID)), Options: o, Watcher: rec, Events: func(string, ...any) {}}
				ctx := context.Background()
				k.findProxies(ctx, tc.addr)
				collected := make(chan struct{})
				close(collected)
				now := time.Now()
				got := k.sampleWindow(ctx, 3, now, cost.Window{From: now.Add(-time.Second), To: now, Measured: time.Second}, collected)
				var started, recorded []string
				for _, w := range rec.started {
					if w.Role == cost.RoleNode {
						if w.Name != "node/"+w.Node {
							t.Errorf("node watch %q of node %q", w.Name, w.Node)
						}
						started = append(started, w.Node)
					}
				}
				for _, c := range got {
					if c.Role == results.RoleNode {
						recorded = append(recorded, c.Name)
					}
				}
				var want, wantNames []string
				if !noNodeCost {
					want = tc.nodes
					for _, n := range want {
						wantNames = append(wantNames, "node/"+n)
					}
				}
				slices.Sort(started)
				slices.Sort(recorded)
				if !slices.Equal(started, want) || !slices.Equal(recorded, wantNames) {
					t.Errorf("node watches %v, step records %v; want %v (the targets', its workers' and the proxies' nodes)", started, recorded, wantNames)
				}
				if !slices.ContainsFunc(got, func(c results.ProcessCost) bool { return c.Name == "target" }) {
					t.Errorf("the step records no target: %+v", got)
				}
			})
		}
	}
}
