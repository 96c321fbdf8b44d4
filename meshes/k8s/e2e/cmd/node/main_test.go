package main

import (
	"slices"
	"strings"
	"testing"

	"loadgen/loadgen/study"
)

// The study the node prints runs every proxy over the ladder the node's
// CPUs allow, 100 B and 1 KiB, with the node's Prometheus, and says in
// one line what the ladder leaves out and why.
func TestMeshLadderLines(t *testing.T) {
	images := map[string]string{"nginx": "n:1", "haproxy": "h:1", "caddy": "c:1"}
	out := meshLadderLines("/k/admin.kubeconfig", "loadgen:dev", "http://198.18.64.1:9090", images, 2)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the command and the ladder's reason, got:\n%s", out)
	}
	args := strings.Fields(strings.TrimPrefix(lines[0], "# "))
	value := func(flag string) string {
		if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	ladder, capped := study.MachineLadder(2)
	for flag, want := range map[string]string{"--kubeconfig": "/k/admin.kubeconfig", "--image": "loadgen:dev", "--prometheus": "http://198.18.64.1:9090",
		"--meshes": "sidecar", "--ladder": ladder, "--payloads": "100,1KiB", "-d": StudyStep.String()} {
		if got := value(flag); got != want {
			t.Errorf("%s %q, want %q: %s", flag, got, want, lines[0])
		}
	}
	for p, img := range images {
		if !strings.Contains(lines[0], " --proxy-image "+p+"="+img) {
			t.Errorf("no image of %s: %s", p, lines[0])
		}
	}
	if args[0] != "loadgen" || args[1] != "study" || args[2] != "mesh-ladder" || !slices.Contains(args, "--same-node-ok") {
		t.Errorf("the command: %s", lines[0])
	}
	if lines[1] != "# "+capped || !strings.Contains(capped, "2 CPUs") {
		t.Errorf("the ladder's reason: %q", lines[1])
	}
	if _, capped := study.MachineLadder(16); strings.Count(meshLadderLines("k", "i", "p", images, 16), "\n") != 1 || capped != "" {
		t.Errorf("16 CPUs run the study's own ladder, with no reason line")
	}
}

// The network flags are checked before anything is built: the kube-proxy
// replacement is Cilium's, on several nodes; the CNI is one the nodes run.
func TestCheckNetwork(t *testing.T) {
	for _, c := range []struct {
		nodes int
		cni   string
		kpr   bool
		ok    bool
	}{
		{1, "flannel", false, true},
		{2, "flannel", false, true},
		{2, "macvlan", false, true},
		{2, "cilium", false, true},
		{2, "cilium", true, true},
		{2, "flannel", true, false},
		{2, "macvlan", true, false},
		{1, "cilium", true, false},
		{2, "calico", false, false},
	} {
		if err := checkNetwork(c.nodes, c.cni, c.kpr); (err == nil) != c.ok {
			t.Errorf("--nodes %d --cni %s --kube-proxy-replacement=%v: %v, want ok %v", c.nodes, c.cni, c.kpr, err, c.ok)
		}
	}
}
