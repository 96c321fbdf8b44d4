package k8s

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestDirectTargetBesideTarget checks that in an ambient mesh the direct
// path's target runs on the mesh target's node, or the baseline measures
// another server node (and with two nodes the workers, kept off both
// targets' nodes, may have none left).
//
// Kubernetes, "Assigning Pods to Nodes", inter-pod affinity:
// "requiredDuringSchedulingIgnoredDuringExecution: The scheduler can't
// schedule the Pod unless the rule is met", with the topologyKey
// kubernetes.io/hostname making the node the topology domain.
func TestDirectTargetBesideTarget(t *testing.T) {
	for _, mesh := range []string{MeshIstioAmbient, MeshIstioWaypoint} {
		r, err := Render(Options{Mesh: mesh}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ds := readRendering(t, r.Objects).deployments
		direct, ok := ds[TargetDirectName]
		if !ok {
			t.Fatalf("%s: no %s Deployment", mesh, TargetDirectName)
		}
		a := direct.Spec.Template.Spec.Affinity
		if a == nil || a.PodAffinity == nil || len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
			t.Fatalf("%s: %s has no required pod affinity: %+v", mesh, TargetDirectName, a)
		}
		term := a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
		if term.TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("%s: topologyKey %q, want kubernetes.io/hostname", mesh, term.TopologyKey)
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Matches(labels.Set(ds[TargetName].Spec.Template.Labels)) {
			t.Errorf("%s: the affinity %v does not select the mesh target's pods %v", mesh, sel, ds[TargetName].Spec.Template.Labels)
		}
		if sel.Matches(labels.Set(direct.Spec.Template.Labels)) {
			t.Errorf("%s: the affinity %v selects the direct target itself", mesh, sel)
		}
	}
}
