package report

import (
	"bytes"
	"strings"
	"testing"

	"loadgen/results"
)

// TestPlacementShown checks that the Markdown and HTML reports say, per step
// of a cluster run, where it ran: each role's nodes, the proxies' images and
// the threads and resources their specs gave them, the
// Kubernetes version and the workers' requests.
func TestPlacementShown(t *testing.T) {
	s := sidedSweep("both")
	for i, st := range s.Steps {
		st.ID = []string{"direct_c8t2", "mesh_c8t2"}[i]
		st.Cluster = &results.Placement{Kubernetes: "v1.35.0", WorkerRequests: "cpu=100m,memory=64Mi", Pods: []results.PlacedPod{
			{Role: "target", Name: "loadgen-target-a", Node: "node-1", Proxies: []results.ContainerImage{{Container: "istio-proxy", Image: "docker.io/istio/proxyv2:1.26.0",
				Threads: 2, Requests: "cpu=100m,memory=128Mi", Limits: "cpu=2"}}},
			{Role: "worker", Name: "lg-r-0-a", Node: "node-2"},
			{Role: "worker", Name: "lg-r-0-b", Node: "node-3"},
		}}
	}
	want := "mesh_c8t2: Kubernetes v1.35.0 · target on node-1 · 2 workers on node-2, node-3 · images istio-proxy docker.io/istio/proxyv2:1.26.0 (2 threads, requests cpu=100m,memory=128Mi, limits cpu=2) · worker requests cpu=100m,memory=64Mi"
	md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, []*Sweep{s}, Options{}) }))
	if !strings.Contains(md, "Where the steps ran:") || !strings.Contains(md, "- "+want+"\n") {
		t.Errorf("the Markdown report does not say where the steps ran:\n%s", md)
	}
	html := htmlOf(t, []*Sweep{s})
	if !strings.Contains(html, "Where the steps ran") || !strings.Contains(html, "<li>"+want+"</li>") {
		t.Errorf("the HTML report does not say where the steps ran")
	}
	// A local sweep has no placement, and no such section.
	if md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, []*Sweep{sidedSweep("both")}, Options{}) })); strings.Contains(md, "Where the steps ran") {
		t.Errorf("a sweep without placement says where it ran")
	}
}
