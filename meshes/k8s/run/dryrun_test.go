package run

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"loadgen/meshes/k8s"
)

// TestDryRunSaysProxyTerms checks that the plan says what each proxy of the
// path was given (k8s.Options.ProxySetups), and how the workers reach a
// gateway.
func TestDryRunSaysProxyTerms(t *testing.T) {
	steps := []k8s.Step{{Index: 0, ID: "mesh_c2t2", Path: "mesh", URL: "http://target:8080", Connections: 2, Threads: 2}}
	for _, tc := range []struct {
		o    k8s.Options
		want []string
	}{
		{k8s.Options{Mesh: k8s.MeshLinkerd, Concurrency: 3}, []string{
			"# proxy linkerd-proxy (client): 3 worker threads; CPU request 1; CPU limit 3; memory request 512Mi; by config.linkerd.io/proxy-cpu-limit",
			"# proxy linkerd-proxy (server): 3 worker threads"}},
		{k8s.Options{Mesh: k8s.MeshAppMesh, Mode: k8s.ModeServerOnly}, []string{
			"# proxy envoy (server): CPU request 1; CPU limit 2", "Envoy runs a worker per hardware thread of the node"}},
		{k8s.Options{Mesh: k8s.MeshGateway, Class: "nginx"}, []string{
			"# proxy gateway (shared): class nginx's proxy", "(--via service)"}},
	} {
		k := &Coordinator{Options: tc.o, Load: k8s.Load{Duration: time.Second}, Steps: steps, Workers: 1}
		var b bytes.Buffer
		if err := k.DryRun(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the plan lacks %q:\n%s", tc.o.Mesh, w, b.String())
			}
		}
	}
}
