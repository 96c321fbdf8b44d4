package cost

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s/cluster"
)

// TestWatchedPodsRunTheContainer checks that a watch of a container is the
// pods whose spec runs it, as an app container or a native sidecar (an init
// container that restarts always); not a pod that lacks it, nor one where
// an init container of that name ends before the app starts.
func TestWatchedPodsRunTheContainer(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := func(name string, containers []string, inits ...corev1.Container) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Labels: map[string]string{"run": "r1"}}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		p.Spec.InitContainers = inits
		return p
	}
	client := fake.NewClientset(
		pod("sidecar", []string{"app", "istio-proxy"}),
		pod("native", []string{"app"}, corev1.Container{Name: "istio-proxy", RestartPolicy: &always}),
		pod("bare", []string{"app"}),
		pod("init-only", []string{"app"}, corev1.Container{Name: "istio-proxy"}),
	)
	list := WatchedPods(&cluster.Cluster{Client: client})
	got, err := list(context.Background(), Watch{Namespace: "bench", Selector: "run=r1", Containers: []string{"istio-proxy"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Pod{{"native", []string{"istio-proxy"}}, {"sidecar", []string{"istio-proxy"}}} // the fake lists by name
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pods %+v, want %+v", got, want)
	}
	// A watch of whole pods is every pod its selector selects.
	if got, err := list(context.Background(), Watch{Namespace: "bench", Selector: "run=r1"}); err != nil || len(got) != 4 {
		t.Errorf("whole pods: %+v %v", got, err)
	}
}
