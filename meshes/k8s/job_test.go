package k8s

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkersPlacement checks that the workers ask for resources (never
// BestEffort) and stay off the nodes of the targets and of the proxies
// between them: the waypoint, the ingress-nginx controller in its namespace,
// and the pods a run found behind a gateway's address; --same-node-ok makes
// each rule a preference.
func TestWorkersPlacement(t *testing.T) {
	gw := PodsOf{Namespace: "envoy-gateway-system", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway.envoyproxy.io/owning-gateway-name": GatewayName}}}
	for _, tc := range []struct {
		o     Options
		more  []PodsOf
		avoid []string // label=value@namespace of each term after the targets'
	}{
		{Options{Mesh: MeshIstio, Namespace: "b"}, nil, nil},
		{Options{Mesh: MeshIstioWaypoint, Namespace: "b"}, nil, []string{"gateway.networking.k8s.io/gateway-name=waypoint@b"}},
		{Options{Mesh: MeshIngressNginx, Namespace: "b"}, nil, []string{"app.kubernetes.io/component=controller,app.kubernetes.io/name=ingress-nginx@ingress-nginx"}},
		{Options{Mesh: MeshGateway, Class: "eg", Namespace: "b"}, []PodsOf{gw}, []string{"gateway.envoyproxy.io/owning-gateway-name=loadgen-gateway@envoy-gateway-system"}},
		{Options{Mesh: MeshGateway, Class: "eg", Namespace: "b", SameNodeOK: true, WorkerCPU: "2", WorkerMemory: "1Gi"}, []PodsOf{gw},
			[]string{"gateway.envoyproxy.io/owning-gateway-name=loadgen-gateway@envoy-gateway-system"}},
	} {
		o, err := tc.o.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		pod := o.Job(JobSpec{Name: "j", Workers: 2, AwayFrom: tc.more}).Spec.Template.Spec
		req := pod.Containers[0].Resources.Requests
		wantCPU, wantMem := cmp.Or(o.WorkerCPU, DefaultWorkerCPU), cmp.Or(o.WorkerMemory, DefaultWorkerMem)
		if req.Cpu().String() != wantCPU || req.Memory().String() != wantMem {
			t.Errorf("%s: requests %v, want cpu %s memory %s", o.Mesh, req, wantCPU, wantMem)
		}
		anti := pod.Affinity.PodAntiAffinity
		terms := anti.RequiredDuringSchedulingIgnoredDuringExecution
		if o.SameNodeOK {
			terms = nil
			for _, w := range anti.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(terms, w.PodAffinityTerm)
			}
			if len(anti.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
				t.Errorf("%s --same-node-ok: required terms %v", o.Mesh, anti.RequiredDuringSchedulingIgnoredDuringExecution)
			}
		}
		if len(terms) != 1+len(tc.avoid) || terms[0].LabelSelector.MatchExpressions[0].Values[0] != TargetName {
			t.Fatalf("%s: terms %+v, want the targets' and %v", o.Mesh, terms, tc.avoid)
		}
		for i, want := range tc.avoid {
			tm := terms[1+i]
			ns := o.Namespace
			if len(tm.Namespaces) > 0 {
				ns = tm.Namespaces[0]
			}
			sel, _ := metav1.LabelSelectorAsSelector(tm.LabelSelector)
			if got := sel.String() + "@" + ns; got != want || tm.TopologyKey != "kubernetes.io/hostname" {
				t.Errorf("%s: term %s (%s), want %s", o.Mesh, got, tm.TopologyKey, want)
			}
		}
	}
	for _, bad := range []Options{{WorkerCPU: "lots"}, {WorkerMemory: "-1Mi"}} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--worker-") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestWorkerArgsWire checks that a worker's command line starts with the wire
// version, where a worker older than the check stops at once, and names
// the coordinator's loadgen version when it is known.
func TestWorkerArgsWire(t *testing.T) {
	a := JobSpec{Workers: 2, Connections: 2, Threads: 2, RunArgs: []string{"http://x/"}, Version: "v1.4.0"}.WorkerArgs()
	want := []string{"k8s", "worker", FlagWire, strconv.Itoa(WireVersion), FlagCoordinatorVersion, "v1.4.0", "--workers"}
	if !slices.Equal(a[:len(want)], want) {
		t.Errorf("args %q, want them to start %q", a, want)
	}
	if a := (JobSpec{Workers: 1, Connections: 1, Threads: 1}).WorkerArgs(); slices.Contains(a, FlagCoordinatorVersion) || a[2] != FlagWire {
		t.Errorf("no version: args %q", a)
	}
}
