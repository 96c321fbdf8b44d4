package run

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// workerPod is a step's worker pod on node, its worker running or not,
// enrolled in the ambient mesh or not.
func workerPod(node string, running, isEnrolled bool, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lg-r-0-0", Namespace: "bench"}, Spec: corev1.PodSpec{NodeName: node}}
	for _, c := range append([]string{k8s.ContainerWorker}, containers...) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	st := corev1.ContainerStatus{Name: k8s.ContainerWorker}
	if running {
		st.State.Running = &corev1.ContainerStateRunning{}
	} else {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{st}
	if isEnrolled {
		p.Annotations = map[string]string{k8s.AnnAmbientRedirection: "enabled"}
	}
	return p
}

// TestWorkerCheckAmbient checks that in an ambient mesh the workers' side is
// checked as the target's is. Istio's ambient data plane
// (istio.io/latest/docs/ambient/architecture/data-plane): "Out of Mesh: a
// standard pod without any mesh features enabled"; "When a pod in an
// ambient mesh makes an outbound request, it will be transparently
// redirected to the node-local ztunnel". And istio.io/api's annotation
// ambient.istio.io/redirection: "Automatically configured by Istio to
// indicate a Pod was successfully enrolled in ambient mode. This shows
// the actual state". So a mesh step's worker must carry it and have a
// ready ztunnel on its node; a direct step's must not carry it.
func TestWorkerCheckAmbient(t *testing.T) {
	objs := []runtime.Object{ztunnelIn("kube-system", "n2", true), ztunnelIn("istio-system", "n3", false)}
	for _, tc := range []struct {
		name   string
		mesh   string
		direct bool
		pod    *corev1.Pod
		want   string // "" passes
	}{
		{"mesh worker enrolled, ztunnel ready on its node", k8s.MeshIstioAmbient, false, workerPod("n2", true, true), ""},
		{"mesh worker not enrolled", k8s.MeshIstioAmbient, false, workerPod("n2", true, false), "is not enrolled in the ambient mesh"},
		{"mesh worker enrolled, no ztunnel on its node", k8s.MeshIstioAmbient, false, workerPod("n4", true, true), "no ready ztunnel on node n4"},
		{"mesh worker enrolled, its node's ztunnel not ready", k8s.MeshIstioAmbient, false, workerPod("n3", true, true), "no ready ztunnel on node n3"},
		{"waypoint mesh worker not enrolled", k8s.MeshIstioWaypoint, false, workerPod("n2", true, false), "is not enrolled"},
		{"direct worker enrolled", k8s.MeshIstioAmbient, true, workerPod("n2", true, true), "the baseline would cross ztunnel"},
		{"direct worker out of the mesh, no ztunnel needed", k8s.MeshIstioAmbient, true, workerPod("n4", true, false), ""},
		{"a worker not started yet is not judged", k8s.MeshIstioAmbient, false, workerPod("n4", false, false), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := k8s.Options{Mesh: tc.mesh, Namespace: "bench"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			k := &Coordinator{Cluster: &cluster.Cluster{Client: fake.NewClientset(objs...)}, Options: o}
			check := k.workerCheck(tc.direct)
			if check == nil {
				t.Fatal("no check of the workers in an ambient mesh")
			}
			got := check(context.Background(), tc.pod)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("check: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWorkerCheckSidecar checks that a sidecar mesh's workers carry its proxy
// when the mode places one on them, whichever path the step loads.
func TestWorkerCheckSidecar(t *testing.T) {
	k := &Coordinator{Options: k8s.Options{Mesh: k8s.MeshLinkerd, Mode: k8s.ModeBoth}}
	for _, direct := range []bool{false, true} {
		if got := k.workerCheck(direct)(context.Background(), workerPod("n1", false, false)); !strings.Contains(got, "has no linkerd-proxy container, nothing injected it") {
			t.Errorf("direct %v: %q", direct, got)
		}
		if got := k.workerCheck(direct)(context.Background(), workerPod("n1", false, false, "linkerd-proxy")); got != "" {
			t.Errorf("direct %v: an injected worker refused: %q", direct, got)
		}
	}
	k.Options.Mode = k8s.ModeServerOnly
	if k.workerCheck(false) != nil {
		t.Error("serveronly: the workers have no sidecar to check")
	}
}
