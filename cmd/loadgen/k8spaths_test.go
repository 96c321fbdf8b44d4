package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/loadgen/study"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/paths"
)

func TestK8sPathsDryRun(t *testing.T) {
	code, out, errOut := cli(t, "k8s", "paths", "--dry-run", "-n", "lgp-t", "--run-id", "rt", "--image", "img:2", "-d", "3s", "--repeats", "2", "--tcp-tolerance", "15%")
	if code != 0 {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	for _, want := range []string{
		"# loadgen k8s paths rt (dry run): namespace lgp-t, image img:2",
		"# 2 repeats × 3s per path × test, 1024 B messages; tolerance 15% below hostNetwork, judging k8s-netperf's rule: tcp-stream, pod-pod-other-node against host-host-other-node",
		"# 56 measurements with two nodes (32 with one)",
		"name: lgp-host-server", "hostNetwork: true", "type: NodePort", "name: lgp-rt-0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, err := k8s.DecodeStrict([]byte(out)); err != nil {
		t.Errorf("dry run output does not decode strictly: %v", err)
	}
	// --tolerance is --tcp-tolerance's former name, kept (hidden);
	// --judge all judges every pod row.
	code, out, errOut = cli(t, "k8s", "paths", "--dry-run", "--tolerance", "20%", "--judge", "all")
	if code != 0 || !strings.Contains(out, "tolerance 20% below hostNetwork, judging every pod row") {
		t.Errorf("--tolerance --judge all: exit %d %s\n%s", code, errOut, out)
	}
	if code, out, _ = cli(t, "k8s", "paths", "--help"); code != 0 || strings.Contains(out, "--tolerance ") || !strings.Contains(out, "--tcp-tolerance") {
		t.Errorf("help: the former name shows, or the new one does not:\n%s", out)
	}
}

// Bad input is a usage error (exit 2) in one line; an unreachable cluster
// is a run failure (exit 1) naming the address.
func TestK8sPathsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tcp-tolerance", "ten"}, "--tcp-tolerance"},
		{[]string{"--tolerance", "ten"}, "--tolerance"},
		{[]string{"--tcp-tolerance", "-5%"}, "negative"},
		{[]string{"--tcp-tolerance", "100%"}, "below 100%"},
		{[]string{"--tcp-tolerance", "10%", "--tolerance", "5%"}, "give one"},
		{[]string{"--judge", "some"}, "judge \"some\""},
		{[]string{"--repeats", "0"}, "repeats 0: want 1 to 100"},
		{[]string{"--repeats", "101"}, "repeats 101: want 1 to 100"},
		{[]string{"-d", "0s"}, "duration 0s: want 1s or more per sample"},
		{[]string{"-d", "200ms"}, "1s or more"},
		{[]string{"-n", "Not_A_Label"}, "namespace"},
		{[]string{"extra"}, "unknown command"},
		{[]string{"--no-such-flag"}, "unknown flag"},
	} {
		code, _, errOut := cli(t, append([]string{"k8s", "paths", "--dry-run"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, want 2 and %q in a short message:\n%s", tc.args, code, tc.want, errOut)
		}
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
users: [{name: u, user: {token: t}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, errOut := cli(t, "k8s", "paths", "--kubeconfig", kc, "-d", "1s", "-o", out)
	if code != exitFail || !strings.Contains(errOut, "127.0.0.1:1") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("unreachable cluster: exit %d, want 1 and one line naming it:\n%s", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a run that reached no cluster made its results directory")
	}
}

func TestStudyK8sPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := cli(t, "study", "k8s-paths", "--dry-run", "--kubeconfig", "/k", "--context", "c", "--image", "i:1", "-d", "2s", "--repeats", "2", "--tolerance", "20%", "-o", dir)
	want := "loadgen k8s paths -n loadgen-paths -d 2s --repeats 2 --tolerance 20% --kubeconfig /k --context c --image i:1 -o " + filepath.Join(dir, "k8s-paths")
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "needs: a Kubernetes cluster\n") {
		t.Errorf("dry run: exit %d, want %q\n%s%s", code, want, out, errOut)
	}
	code, out, _ = cli(t, "study", "k8s-paths", "--dry-run")
	if code != 0 || !strings.Contains(out, "loadgen k8s paths -n loadgen-paths -d 10s --repeats 3 --tolerance 10% -o ") {
		t.Errorf("defaults: exit %d\n%s", code, out)
	}
	code, out, _ = cli(t, "study", "list")
	if code != 0 || !strings.Contains(out, "k8s-paths ") || !strings.Contains(out, "a Kubernetes cluster") {
		t.Errorf("study list: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"study", "k8s-paths", "--kubeconfig", "/k", "--meshes", "istio", "--dry-run"},
		{"study", "k8s-paths", "--assert", "p99<1ms", "--dry-run"},
		{"study", "k8s-paths", "--tolerance", "lots", "--dry-run"},
		{"study", "k8s-paths", "--repeats", "0", "--dry-run"},
		{"study", "mesh-ladder", "--tolerance", "20%", "--dry-run"},
		{"study", "cni-matrix", "--image", "i:1", "--dry-run"},
	} {
		if code, _, errOut := cli(t, args...); code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, want 2 and a short message\n%s", args, code, errOut)
		}
	}

	// The study's printout is the paths table, and says it is ours alone.
	s, _ := study.Lookup("k8s-paths")
	f := &studyFlags{out: t.TempDir()}
	var b bytes.Buffer
	if err := printPathsStudy(&b, s, f); err != nil || !strings.Contains(b.String(), "holds no paths.json") {
		t.Errorf("nothing measured: %v\n%s", err, b.String())
	}
	tab := &paths.Table{Kind: paths.Kind, Tolerance: 0.1, Repeats: 1, DurationSeconds: 2,
		Nodes: paths.Nodes{Schedulable: []string{"n"}, Server: "n"}, KubeProxy: paths.ProxyMode{Mode: "iptables", Source: "kube-proxy"},
		Rows: []paths.Row{{Path: paths.HostHost, Test: paths.TestTCPRR, Unit: "trans/s", Verdict: paths.VerdictBaseline}}}
	if err := os.MkdirAll(filepath.Join(f.out, "k8s-paths"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := paths.WriteTable(filepath.Join(f.out, "k8s-paths"), tab); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := printPathsStudy(&b, s, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== " + s.Title + " ==", "kube-proxy: iptables (from kube-proxy)", "host-host", "publishes a method, not figures"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
