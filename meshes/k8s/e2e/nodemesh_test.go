package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/results/store"
)

// TestNodeMeshMissing checks that on a node where no mesh, ingress controller
// or gateway runs, k8s run refuses to call a path a mesh path: its
// annotations were ignored and its pods started without a proxy, so the
// "mesh" would read as free. Each case says what is missing and what
// installs it, and leaves nothing labelled.
func TestNodeMeshMissing(t *testing.T) {
	n := testNode(t)
	installCRDs(t, n.RESTConfig)
	bin := buildLoadgen(t)
	sweep := writeNodeSweep(t, "ladder: c2t2", "duration: 2s",
		`paths: [{name: mesh, url: "http://target:8080"}, {name: direct, url: "http://target:8081", baseline: true}]`)
	cases := []struct {
		name  string
		args  []string
		want  string
		steps bool // the run records its steps, each failed: the client side's check
	}{
		{"istio", []string{"--mesh", "istio"}, "the target pod loadgen-target-", false},
		{"istio-clientonly", []string{"--mesh", "istio", "--mode", "clientonly"}, "has no istio-proxy container, nothing injected it", true},
		{"linkerd", []string{"--mesh", "linkerd"}, "has no linkerd-proxy container", false},
		{"ambient", []string{"--mesh", "istio-ambient"}, "no ready ztunnel on node loadgen-node", false},
		{"ingress", []string{"--mesh", "ingress-nginx"}, "IngressClass nginx does not exist", false},
		{"ingress-traefik", []string{"--mesh", "ingress", "--class", "traefik"}, "IngressClass traefik does not exist", false},
		{"gateway", []string{"--mesh", "gateway", "--class", "traefik"}, "GatewayClass traefik does not exist", false},
		{"appmesh", []string{"--mesh", "appmesh"}, "needs kinds this cluster does not serve: Mesh (appmesh.k8s.aws/v1beta2)", false},
	}
	// Side by side: each waits for its target, then is refused.
	results := make([]result, len(cases))
	dirs := make([]string, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		dirs[i] = filepath.Join(t.TempDir(), "results")
		args := append([]string{"k8s", "run", "-n", "node-mesh-" + c.name, "-f", sweep, "--workers", "1", "-o", dirs[i],
			"--image", n.Image, "--same-node-ok", "--start-lead", "5s", "--target-wait", "90s", "--no-metrics", "--run-id", fmt.Sprintf("m%d", i)}, c.args...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runLoadgen(t, bin, n.Kubeconfig, 4*time.Minute, args...)
		}()
	}
	wg.Wait()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results[i]
			out := r.stderr + r.stdout
			if r.code != 1 || !strings.Contains(out, c.want) {
				t.Errorf("k8s run %v: %v\nwant exit 1 and %q", c.args, r, c.want)
			}
			_, steps, err := store.ReadSweep(dirs[i])
			switch {
			case c.steps:
				for _, st := range steps {
					if st.Run != nil || !strings.Contains(st.Failed, c.want) {
						t.Errorf("step %s: %q", st.ID, st.Failed)
					}
				}
				if err != nil || len(steps) == 0 {
					t.Errorf("no steps recorded: %v", err)
				}
			case err == nil && len(steps) > 0:
				t.Errorf("%d steps measured for a mesh that is not there", len(steps))
			}
			if _, err := os.Stat(filepath.Join(dirs[i], "steps")); err == nil {
				if ents, _ := os.ReadDir(filepath.Join(dirs[i], "steps")); !c.steps && len(ents) > 0 {
					t.Errorf("steps written: %v", ents)
				}
			}
			noneLeftOn(t, n.Client, "node-mesh-"+c.name)
		})
	}
}
