package k8s

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func targetPod(containers, inits []string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loadgen-target-1", Namespace: "bench", Labels: targetLabels()},
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
	p.Annotations = map[string]string{annAmbientRedirection: "enabled"}
	return p
}

func directPod(isEnrolled bool) *corev1.Pod {
	p := targetPod([]string{"http-direct"}, nil)
	p.Name, p.Labels = "loadgen-target-direct-1", map[string]string{LabelName: TargetDirectName, labelDataplaneMode: "none"}
	if isEnrolled {
		return enrolled(p)
	}
	return p
}

func ztunnel() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ztunnel-x", Namespace: "istio-system", Labels: map[string]string{"app": "ztunnel"}},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// A sidecar mesh whose proxy is not in the target pod, or an ambient mesh
// without a ztunnel on its node, is refused; a proxy as an app container
// or as a native sidecar is the mesh at work.
func TestCheckMesh(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		objs []*corev1.Pod
		want string // "" passes
	}{
		{"none", Options{Mesh: MeshNone}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, ""},
		{"istio injected", Options{Mesh: MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin", "istio-proxy"}, nil)}, ""},
		{"istio native sidecar", Options{Mesh: MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, []string{"istio-proxy"})}, ""},
		{"istio missing", Options{Mesh: MeshIstio}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "has no istio-proxy container"},
		{"istio revision", Options{Mesh: MeshIstio, Revision: "1-32"}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "istio.io/rev=1-32"},
		{"clientonly leaves the target alone", Options{Mesh: MeshIstio, Mode: ModeClientOnly}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, ""},
		{"linkerd missing", Options{Mesh: MeshLinkerd}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "linkerd-proxy"},
		{"ambient without ztunnel", Options{Mesh: MeshIstioAmbient}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil)}, "no ztunnel runs on node n1"},
		{"ambient", Options{Mesh: MeshIstioAmbient}, []*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(false), ztunnel()}, ""},
		{"ambient, the target not enrolled", Options{Mesh: MeshIstioAmbient}, []*corev1.Pod{targetPod([]string{"http-httpbin"}, nil), directPod(false), ztunnel()},
			"the target pod loadgen-target-1 is not enrolled in the ambient mesh"},
		{"ambient, the direct target enrolled", Options{Mesh: MeshIstioAmbient}, []*corev1.Pod{enrolled(targetPod([]string{"http-httpbin"}, nil)), directPod(true), ztunnel()},
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
			o, err := c.o.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			o.Namespace = "bench"
			k := &Coordinator{Cluster: &Cluster{Client: client}, Options: o}
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

// TestWatchedPodsOnTheRunsNodes: ztunnel's figure is the ztunnels on the
// nodes of the run's pods, not every node's.
func TestWatchedPodsOnTheRunsNodes(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	pod := func(name, ns, node string, labels map[string]string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := Options{Mesh: MeshIstioAmbient, Namespace: "bench", RunID: "r1"}.withDefaults()
	run := o.labels(nil)
	pod("loadgen-target-1", "bench", "n1", run)
	pod("lg-r1-0-abc", "bench", "n2", run)
	pod("other-run", "bench", "n4", map[string]string{LabelManagedBy: ManagedBy, LabelRun: "r2"})
	for i, n := range []string{"n1", "n2", "n3", "n4"} {
		pod(fmt.Sprintf("ztunnel-%d", i), "istio-system", n, map[string]string{"app": "ztunnel"})
	}
	var zt Watch
	for _, w := range o.Watches() {
		if w.Name == "ztunnel" {
			zt = w
		}
	}
	got, err := (&Cluster{Client: client}).WatchedPods(ctx, zt)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "ztunnel-0,ztunnel-1" {
		t.Errorf("ztunnel pods %v, want those of nodes n1 and n2", got)
	}
}
