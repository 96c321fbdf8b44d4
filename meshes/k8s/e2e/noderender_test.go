package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"loadgen/meshes/k8s"
	k8scluster "loadgen/meshes/k8s/cluster"
)

// TestNodeRenderings applies every mesh's rendering on the real node —
// the Gateway API and Istio CRDs installed from their modules — and
// checks that the target is scheduled by the real scheduler, started by
// the kubelet and Ready: the meshes' annotations and labels stop no pod
// where no mesh runs (App Mesh's CRDs from the controller's published
// files in testdata, removed again afterwards).
// No mesh controller runs here, so no sidecar is injected: that a run
// must then refuse to call the path a mesh path is the issue of mesh
// comparisons, not of scheduling.
func TestNodeRenderings(t *testing.T) {
	n := testNode(t)
	installCRDs(t, n.RESTConfig)
	defer installAppMeshCRDs(t, n.RESTConfig)()
	ctx := context.Background()
	kc, err := k8scluster.ConnectConfig(ctx, n.RESTConfig, "node")
	if err != nil {
		t.Fatal(err)
	}
	cases := []k8s.Options{
		{Mesh: k8s.MeshNone}, {Mesh: k8s.MeshIstio}, {Mesh: k8s.MeshIstio, Mode: k8s.ModeServerOnly},
		{Mesh: k8s.MeshIstio, Mode: k8s.ModeClientOnly, MTLS: true, Revision: "1-32"},
		{Mesh: k8s.MeshIstioAmbient}, {Mesh: k8s.MeshIstioWaypoint, MTLS: true},
		{Mesh: k8s.MeshLinkerd}, {Mesh: k8s.MeshIngressNginx}, {Mesh: k8s.MeshGateway, Class: "traefik"},
		{Mesh: k8s.MeshAppMesh},
	}
	// --target-node: both targets of an ambient mesh on the last node the
	// API server lists, through the real scheduler.
	nodes, err := n.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	cases = append(cases, k8s.Options{Mesh: k8s.MeshIstioAmbient, TargetNode: nodes.Items[len(nodes.Items)-1].Name})
	// All at once (the pods start side by side), then each one's checks.
	for i := range cases {
		o := &cases[i]
		o.Namespace = fmt.Sprintf("node-r%d-%s", i, o.Mesh)
		o.RunID = fmt.Sprintf("r%d", i)
		o.Image = n.Image
		o.SameNodeOK = true
		r, err := k8s.Render(*o, nil)
		if err != nil {
			t.Fatal(err)
		}
		// As k8s run applies them: without the client Job, and only
		// loadgen's own objects (not the ingress controller's ConfigMap).
		var objs []*unstructured.Unstructured
		for _, u := range r.WithoutClient() {
			if u.GetLabels()[k8s.LabelManagedBy] == k8s.ManagedBy {
				objs = append(objs, u)
			}
		}
		if err := kc.CheckKinds(o.Mesh, objs); err != nil {
			t.Fatal(err)
		}
		if err := kc.Apply(ctx, objs); err != nil {
			t.Fatalf("%s: the API server refused a rendered object: %v", o.Namespace, err)
		}
	}
	for _, o := range cases {
		t.Run(o.Namespace, func(t *testing.T) {
			targets := []string{k8s.TargetName}
			if o.Mesh == k8s.MeshIstioAmbient || o.Mesh == k8s.MeshIstioWaypoint {
				targets = append(targets, k8s.TargetDirectName) // the direct path's, out of the mesh
			}
			for _, name := range targets {
				pod := waitTargetReady(t, n.Client, o.Namespace, name)
				if pod.Spec.NodeName == "" || pod.Status.PodIP == "" {
					t.Errorf("target pod %s: node %q, IP %q", pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
				}
				if o.TargetNode != "" && pod.Spec.NodeName != o.TargetNode {
					t.Errorf("target pod %s on node %q, want --target-node %s", pod.Name, pod.Spec.NodeName, o.TargetNode)
				}
				if len(pod.Spec.Containers) != len(k8s.TargetContainers()) {
					t.Errorf("target pod %s has %d containers: something injected into it", pod.Name, len(pod.Spec.Containers))
				}
			}
		})
	}
	for _, o := range cases {
		if _, err := kc.Cleanup(ctx, o.Namespace, o.RunID); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range cases {
		noneLeftOn(t, n.Client, o.Namespace)
	}
}

// waitTargetReady waits for a target's pod (Deployment name) to be Ready on a node.
func waitTargetReady(t *testing.T, c kubernetes.Interface, ns, name string) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := "no pod yet"
	for time.Now().Before(deadline) {
		l, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelName + "=" + name})
		if err == nil {
			for _, p := range l.Items {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						return p
					}
				}
				last = fmt.Sprintf("%s %s %v", p.Name, p.Status.Phase, p.Status.Conditions)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("the target in %s never got Ready: %s", ns, strings.TrimSpace(last))
	return corev1.Pod{}
}
