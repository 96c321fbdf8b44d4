package run

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
)

// TestWatchedPodsOnTheRunsNodes checks that ztunnel's figure is the ztunnels
// on the nodes of the run's pods, not every node's.
func TestWatchedPodsOnTheRunsNodes(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	pod := func(name, ns, node string, labels map[string]string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := k8s.Options{Mesh: k8s.MeshIstioAmbient, Namespace: "bench", RunID: "r1"}.WithDefaults()
	run := map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: o.RunID}
	pod("loadgen-target-1", "bench", "n1", run)
	pod("lg-r1-0-abc", "bench", "n2", run)
	pod("other-run", "bench", "n4", map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: "r2"})
	for i, n := range []string{"n1", "n2", "n3", "n4"} {
		pod(fmt.Sprintf("ztunnel-%d", i), "istio-system", n, map[string]string{"app": "ztunnel"})
	}
	var zt cost.Watch
	ws, _ := Watches(o, 0)
	for _, w := range ws {
		if w.Name == "ztunnel" {
			zt = w
		}
	}
	pods, err := cost.WatchedPods(&cluster.Cluster{Client: client})(ctx, zt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "ztunnel-0,ztunnel-1" {
		t.Errorf("ztunnel pods %v, want those of nodes n1 and n2", got)
	}
}

// TestSidecarMeshWatch checks that --mesh sidecar's proxies are its sidecar
// containers, in the run's pods, one watch a side.
func TestSidecarMeshWatch(t *testing.T) {
	o, err := k8s.Options{Mesh: k8s.MeshSidecar, Namespace: "bench"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := Watches(o, 0)
	sides := map[string]bool{}
	for _, w := range ws {
		if w.Role != "proxy" {
			continue
		}
		if !slices.Equal(w.Containers, []string{k8s.ContainerSidecar}) || w.Namespace != "bench" {
			t.Errorf("proxy watch %+v, want the %s container in bench", w, k8s.ContainerSidecar)
		}
		sides[w.Side] = true
	}
	if !sides["client"] || !sides["server"] || len(sides) != 2 {
		t.Errorf("proxy watches %+v, want a client and a server side", ws)
	}
}

func TestNativeSidecarVersion(t *testing.T) {
	for _, tc := range []struct {
		major, minor string
		native, ok   bool
	}{
		{"1", "28", false, true}, {"1", "29", true, true}, {"1", "35", true, true}, {"1", "28+", false, true},
		{"1", "30+", true, true}, {"2", "0", true, true}, {"", "", false, false}, {"1", "x", false, false},
	} {
		if native, ok := nativeSidecarVersion(tc.major, tc.minor); native != tc.native || ok != tc.ok {
			t.Errorf("%s.%s: native %v ok %v, want %v %v", tc.major, tc.minor, native, ok, tc.native, tc.ok)
		}
	}
}
