package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"loadgen/meshes/k8s/e2e/node"
)

// The real node the node tests share: started by the first test that
// asks for it, taken down after the last one (TestMain), so that a test
// binary starts one node, not one per test.
//
// LOADGEN_NODE_DIR=DIR makes the tests use the node that is up in DIR
// (`make cluster-up`) and leave it up: quicker when trying things.
var shared struct {
	once     sync.Once
	n        *node.Node
	err      error
	attached bool
}

// beside lets a node test run beside the others that call it, once the
// tests that do not have run (go test's parallel phase; make
// test-cluster's -parallel 8 starts them all at once, so that Traefik's
// never waits for a slot): TestNodeTraefik, whose seven 70 s steps
// mostly wait on cAdvisor, with the tests whose checks hold on a busy
// node and that touch nothing but their own namespaces (Failures,
// LatticeAddress, RBAC) and the tests that start nodes of their own
// (Flannel, Macvlan, Cilium: one after the other, takeSeveralNodes). What
// measures the node against itself (Cost, the sidecars' costs, Paths'
// verdicts), what switches its kube-proxy (Run, Paths) and what wants no
// Traefik (MeshMissing, Renderings' Gateway of class traefik) run before,
// alone.
func beside(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// severalNodes is held by the test whose cluster of several nodes is up:
// Flannel's, Macvlan's and Cilium's share flannelDir and the underlay's
// addresses, so they take turns (each beside the one node's tests, whose
// pods their teardown leaves alone: every node pins its pods' network
// namespaces under its own directory).
var severalNodes sync.Mutex

// takeSeveralNodes makes t the one test with a cluster of several nodes
// until it ends, its teardown and the checks after it included: call it
// before anything whose cleanup must run while the machine is t's.
func takeSeveralNodes(t *testing.T) {
	t.Helper()
	severalNodes.Lock()
	t.Cleanup(severalNodes.Unlock)
}

// nodeStartLead is the node tests' k8s run --start-lead: a worker's pod
// must be scheduled, get its sandbox and start within it. 8 s was short
// on a busy 2-core machine (a pod 3.5 s past it failed a step); the
// default, 30 s, is meant for clusters that pull images.
const nodeStartLead = "15s"

// testNode is the running node. A machine that cannot run one (not root,
// packages missing) skips the test, saying why; under CI=1, where
// .ci/run installs what the node needs, it fails with the component's
// own error instead.
func testNode(t *testing.T) *node.Node {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		if err := node.Preflight(); err != nil {
			shared.err = err
			return
		}
		bins, err := node.Build(ctx, node.BuildOptions{Module: ".", Log: os.Stderr})
		if err != nil {
			shared.err = fmt.Errorf("building the node: %w", err)
			return
		}
		if dir := os.Getenv("LOADGEN_NODE_DIR"); dir != "" {
			shared.attached = true
			if shared.n, shared.err = node.Attach(ctx, dir, os.Stderr); shared.err == nil {
				shared.err = shared.n.ImportLoadgen(ctx, bins) // this build's loadgen, not the one it started with
			}
			return
		}
		shared.n, shared.err = node.Start(ctx, node.Config{Dir: nodeDir, Bins: bins, Log: os.Stderr})
	})
	if shared.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the node cannot start: %v", shared.err)
		}
		t.Skipf("no node on this machine: %v", shared.err)
	}
	if shared.n.Image == "" || shared.n.PauseImage == "" {
		t.Fatalf("the node in %s records no images (started by an older build): take it down and up again", shared.n.Dir)
	}
	if dead := shared.n.Dead(); len(dead) > 0 {
		t.Fatalf("node components died: %v\n%s", dead, shared.n.Logs(30))
	}
	return shared.n
}

// nodeDir is where the tests' node lives: not node.DefaultDir, which is
// `make cluster-up`'s.
const nodeDir = "/var/tmp/loadgen-node-e2e"

// stopNode takes the tests' node down and checks that nothing of it is
// left on the machine; it returns what went wrong.
func stopNode() error {
	if shared.n == nil || shared.attached {
		return nil
	}
	return shared.n.Stop()
}

// useProxyMode runs kube-proxy in mode for the test (restarted with its
// old rules cleaned up, when it ran in another), and checks that it says so.
func useProxyMode(t *testing.T, n *node.Node, mode string) {
	t.Helper()
	ctx := context.Background()
	if err := n.SetProxyMode(ctx, mode); err != nil {
		t.Fatalf("kube-proxy %s: %v\n%s", mode, err, n.Logs(20))
	}
	if got, err := n.ProxyModeRunning(ctx); err != nil || got != mode {
		t.Fatalf("kube-proxy says it runs %q (%v), want %s", got, err, mode)
	}
}

// iptablesAfter puts kube-proxy back in iptables mode, the node's
// default, when the test ends.
func iptablesAfter(t *testing.T, n *node.Node) {
	t.Cleanup(func() {
		if err := n.SetProxyMode(context.Background(), node.ProxyIPTables); err != nil {
			t.Errorf("kube-proxy back to iptables: %v", err)
		}
	})
}
