package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// TestCheckMeshSidecar checks that --mesh sidecar's target must carry its
// proxy, as a native sidecar or a container, where the mode places one.
func TestCheckMeshSidecar(t *testing.T) {
	for _, c := range []struct {
		name       string
		mode       string
		containers []string
		inits      []string
		want       string
	}{
		{"native", k8s.ModeBoth, []string{"http-httpbin"}, []string{k8s.ContainerCapture, k8s.ContainerSidecar}, ""},
		{"container", k8s.ModeServerOnly, []string{"http-httpbin", k8s.ContainerSidecar}, []string{k8s.ContainerCapture}, ""},
		{"missing", k8s.ModeBoth, []string{"http-httpbin"}, nil, "has no " + k8s.ContainerSidecar + " container"},
		{"clientonly", k8s.ModeClientOnly, []string{"http-httpbin"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			if _, err := client.CoreV1().Pods("bench").Create(context.Background(), targetPod(c.containers, c.inits), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			o, err := k8s.Options{Mesh: k8s.MeshSidecar, Mode: c.mode, Namespace: "bench"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
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
