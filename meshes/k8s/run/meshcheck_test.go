package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

func targetPod(containers, inits []string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loadgen-target-1", Namespace: "bench", Labels: map[string]string{k8s.LabelName: k8s.TargetName}},
		Spec: corev1.PodSpec{NodeName: "n1"}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	for _, c := range inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c})
	}
	return p
}

func enrolled(p *corev1.Pod) *corev1.Pod {
	p.Annotations = map[string]string{k8s.AnnAmbientRedirection: "enabled"}
	return p
}

func directPod(isEnrolled bool) *corev1.Pod {
	p := targetPod([]string{"http-direct"}, nil)
	p.Name, p.Labels = "loadgen-target-direct-1", map[string]string{k8s.LabelName: k8s.TargetDirectName, k8s.LabelDataplaneMode: "none"}
	if isEnrolled {
		return enrolled(p)
	}
	return p
}

func ztunnel() *corev1.Pod { return ztunnelIn("istio-system", "n1", true) }

// ztunnelIn is a ztunnel pod as Istio's chart labels it (app=ztunnel),
// in the chart's namespace, on node, ready or not.
func ztunnelIn(ns, node string, ready bool) *corev1.Pod {
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ztunnel-" + node, Namespace: ns, Labels: map[string]string{"app": "ztunnel"}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}}}}
}

// onNode moves a pod to a node.
func onNode(p *corev1.Pod, node string) *corev1.Pod {
	p.Spec.NodeName = node
	return p
}

// A sidecar mesh whose proxy is not in the target pod, or an ambient mesh
// without a ztunnel on its node, is refused; a proxy as an app container
// or as a native sidecar is the mesh at work.
func TestCheckMesh(t *testing.T) {
	cases := []struct {
		name string
		o    k8s.Options
		objs []*corev1.Pod
		want string // "" passes
	}{
		{"none", k8s.Options{Mesh: k8s.MeshNone}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, ""},
		{"istio injected", k8s.Options{Mesh: k8s.MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin", "istio-proxy"}, nil)}, ""},
		{"istio native sidecar", k8s.Options{Mesh: k8s.MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, []string{"istio-proxy"})}, ""},
		{"istio missing", k8s.Options{Mesh: k8s.MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "has no istio-proxy container"},
		{"istio revision", k8s.Options{Mesh: k8s.MeshIstio, Revision: "1-32"}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "istio.io/rev=1-32"},
		{"clientonly leaves the target alone", k8s.Options{Mesh: k8s.MeshIstio, Mode: k8s.ModeClientOnly}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, ""},
		{"linkerd missing", k8s.Options{Mesh: k8s.MeshLinkerd}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "linkerd-proxy"},
		{"ambient without ztunnel", k8s.Options{Mesh: k8s.MeshIstioAmbient}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "no ready ztunnel on node n1"},
		// Istio's ztunnel chart installs its DaemonSet in the release's
		// namespace ({{ .Release.Namespace }}): kube-system on some
		// platforms.
		{"ambient, ztunnel in kube-system", k8s.Options{Mesh: k8s.MeshIstioAmbient},
			[]*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(false), ztunnelIn("kube-system", "n1", true)}, ""},
		{"ambient, ztunnel not ready", k8s.Options{Mesh: k8s.MeshIstioAmbient},
			[]*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(false), ztunnelIn("istio-system", "n1", false)}, "no ready ztunnel on node n1"},
		{"ambient, ztunnel on another node only", k8s.Options{Mesh: k8s.MeshIstioAmbient},
			[]*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(false), ztunnelIn("istio-system", "n2", true)}, "no ready ztunnel on node n1"},
		// The direct path's target is out of the mesh: its node needs no
		// ztunnel.
		{"ambient, the direct target's node without ztunnel", k8s.Options{Mesh: k8s.MeshIstioAmbient},
			[]*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), onNode(directPod(false), "n2"), ztunnel()}, ""},
		{"ambient", k8s.Options{Mesh: k8s.MeshIstioAmbient}, []*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(false), ztunnel()}, ""},
		{"ambient, the target not enrolled", k8s.Options{Mesh: k8s.MeshIstioAmbient}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil), directPod(false), ztunnel()},
			"the target pod loadgen-target-1 is not enrolled in the ambient mesh"},
		{"ambient, the direct target enrolled", k8s.Options{Mesh: k8s.MeshIstioAmbient}, []*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(true), ztunnel()},
			"the baseline would cross ztunnel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			for _, p := range c.objs {
				if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			o, err := c.o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			o.Namespace = "bench"
			k := &Coordinator{Cluster: &cluster.Cluster{Client: client}, Options: o}
			err = k.checkMesh(context.Background())
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (!errors.Is(err, ErrMeshMissing) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%v, want ErrMeshMissing saying %q", err, c.want)
			}
		})
	}
}
