package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s"
)

func TestClusterStarts(t *testing.T) {
	c := startCluster(t)
	if _, err := k8s.NewScheme(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
