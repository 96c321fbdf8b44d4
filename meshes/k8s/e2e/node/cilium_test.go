package node

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNodeBuildCilium checks the agent, operator and cilium-cni, the BPF
// sources and clang that make node-build built (or finds them): the agent
// runs. A node test (make test-cluster, after node-build), not a unit
// test: a cold build takes 13–36 min. It fails under CI=1 without clang-16,
// and skips otherwise.
func TestNodeBuildCilium(t *testing.T) {
	if _, err := os.Stat(CiliumClang); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI installs clang-16 (apt-get install clang-16 llvm-16): %v", err)
		}
		t.Skipf("no %s: apt-get install clang-16 llvm-16", CiliumClang)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	dir, err := BuildCilium(ctx, BuildOptions{Nice: true, Log: tlog{t}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cilium-agent", "cilium-operator-generic", "cilium-cni", "lib/bpf/bpf_lxc.c", "lib/bpf/bpf_host.c", "clang/clang"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the build lacks %s: %v", f, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(dir, "clang", "clang")); err != nil || l != CiliumClang {
		t.Errorf("clang/clang → %q (%v), want %s", l, err, CiliumClang)
	}
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "cilium-agent"), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cilium-agent "+strings.TrimPrefix(CiliumVersion, "v")+" ") {
		t.Errorf("cilium-agent --version: %v, want %s stamped:\n%s", err, CiliumVersion, out)
	}
	out, err = exec.CommandContext(ctx, filepath.Join(dir, "cilium-agent"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--kube-proxy-replacement") {
		t.Errorf("cilium-agent --help: %v\n%s", err, out)
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }

// The scratch module requires Cilium at its version with the two
// replaces, the stub's one constant, and imports the three mains' packages.
func TestCiliumModuleFiles(t *testing.T) {
	f := ciliumModuleFiles()
	for file, wants := range map[string][]string{
		"go.mod": {"require github.com/cilium/cilium " + CiliumVersion + "\n",
			"replace github.com/osrg/gobgp/v4 => github.com/osrg/gobgp/v4 " + CiliumGoBGP + "\n",
			"replace sigs.k8s.io/mcs-api/controllers => ./mcsstub\n"},
		"mcsstub/go.mod":         {"module sigs.k8s.io/mcs-api/controllers\n"},
		"mcsstub/controllers.go": {"package controllers\n", `const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"`},
		"tools.go":               {"//go:build tools\n", `"github.com/cilium/cilium/daemon"`, `"github.com/cilium/cilium/operator/cmd"`, `"github.com/cilium/cilium/plugins/cilium-cni"`},
	} {
		for _, w := range wants {
			if !strings.Contains(f[file], w) {
				t.Errorf("%s lacks %q:\n%s", file, w, f[file])
			}
		}
	}
	if len(f) != 4 {
		t.Errorf("%d files, want 4: %v", len(f), f)
	}
	if l := ciliumLdflags(); !strings.Contains(l, "-X github.com/cilium/cilium/pkg/version.ciliumVersion=1.20.2") || !strings.Contains(l, "-s -w") {
		t.Errorf("ldflags %q", l)
	}
}

// A node's agent: its own directories under DIR/nodes/NAME/cilium, VXLAN,
// IPAM kubernetes, CRD identities, its uplink, the conflist in its CNI
// directory; the kube-proxy replacement only when asked.
func TestCiliumAgentArgs(t *testing.T) {
	m := multiMembers(2)[1]
	p := memberPaths("/d", m)
	d := ciliumDirsOf(p, m)
	for _, kpr := range []bool{false, true} {
		args := ciliumAgentArgs(d, p, m, "/b", "/d/cilium.kubeconfig", kpr)
		j := " " + strings.Join(args, " ") + " "
		for _, w := range []string{
			" --k8s-kubeconfig-path /d/cilium.kubeconfig ", " --routing-mode tunnel --tunnel-protocol vxlan ",
			" --ipam kubernetes ", " --identity-allocation-mode crd ", " --devices " + m.Uplink + " ",
			" --bpf-root /d/nodes/loadgen-node-2/cilium/bpffs ", " --cgroup-root /d/nodes/loadgen-node-2/cilium/cgroup ",
			" --lib-dir /b/lib ", " --state-dir /d/nodes/loadgen-node-2/cilium/state ",
			" --socket-path /d/nodes/loadgen-node-2/cilium/state/cilium.sock ",
			" --write-cni-conf-when-ready /d/nodes/loadgen-node-2/cni/net.d/05-cilium.conflist ",
			" --enable-ipv6=false ", " --enable-hubble=false ",
		} {
			if !strings.Contains(j, w) {
				t.Errorf("kpr %v: the agent's args lack %q:\n%s", kpr, w, j)
			}
		}
		if got := strings.Contains(j, " --kube-proxy-replacement=true "); got != kpr {
			t.Errorf("kpr %v: --kube-proxy-replacement=true there: %v", kpr, got)
		}
	}
	if d.netns != "/d/nodes/loadgen-node-2/containerd/state/io.containerd.grpc.v1.cri/netns" || d.cgroup2 != "/sys/fs/cgroup/unified/loadgen-node-2" {
		t.Errorf("netns %s, cgroup2 %s", d.netns, d.cgroup2)
	}
}

// The agent's mount namespace: the two sysctls read-only, /var/run/cilium
// the node's own with the node's containerd netns directory in it, the
// node's cgroup2 subtree as the cgroup root, clang first on PATH, the
// node's name; then the agent.
func TestCiliumAgentScript(t *testing.T) {
	m := multiMembers(2)[0]
	d := ciliumDirsOf(memberPaths("/d", m), m)
	s := ciliumAgentScript(d, "/b", m.Name)
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, w := range []string{
		"set -e",
		"mount --bind /proc/sys/kernel/timer_migration /proc/sys/kernel/timer_migration",
		"mount -o remount,bind,ro /proc/sys/kernel/timer_migration",
		"mount --bind /proc/sys/kernel/unprivileged_bpf_disabled /proc/sys/kernel/unprivileged_bpf_disabled",
		"mount -o remount,bind,ro /proc/sys/kernel/unprivileged_bpf_disabled",
		"mkdir -p /d/nodes/loadgen-node-1/cilium/run/netns",
		"mount --bind /d/nodes/loadgen-node-1/cilium/run /var/run/cilium",
		"mount --bind /d/nodes/loadgen-node-1/containerd/state/io.containerd.grpc.v1.cri/netns /var/run/cilium/netns",
		"mount --bind /sys/fs/cgroup/unified/loadgen-node-1 /d/nodes/loadgen-node-1/cilium/cgroup",
		"export PATH=/b/clang:$PATH",
		"export K8S_NODE_NAME=loadgen-node-1",
	} {
		if !slices.Contains(lines, w) {
			t.Errorf("the script lacks %q:\n%s", w, s)
		}
	}
	if lines[len(lines)-1] != `exec "$@"` {
		t.Errorf("the script ends %q, want the agent exec'd", lines[len(lines)-1])
	}
	idx := func(w string) int {
		for i, l := range lines {
			if l == w {
				return i
			}
		}
		return -1
	}
	if idx("mount --bind /d/nodes/loadgen-node-1/cilium/run /var/run/cilium") > idx("mount --bind /d/nodes/loadgen-node-1/containerd/state/io.containerd.grpc.v1.cri/netns /var/run/cilium/netns") {
		t.Error("the netns directory is bound before /var/run/cilium, which then hides it")
	}
}

// The operator: IPAM kubernetes, CRD identities, its API on the control
// plane's address, nothing on loopback.
func TestCiliumOperatorArgs(t *testing.T) {
	j := " " + strings.Join(ciliumOperatorArgs("/d/cilium.kubeconfig", MultiAddresses), " ") + " "
	for _, w := range []string{" --k8s-kubeconfig-path /d/cilium.kubeconfig ", " --ipam kubernetes ", " --identity-allocation-mode crd ",
		" --enable-metrics=false ", " --enable-gops=false ", " --operator-api-serve-addr " + MultiAddresses.NodeIP + ":9234 "} {
		if !strings.Contains(j, w) {
			t.Errorf("the operator's args lack %q:\n%s", w, j)
		}
	}
}

// containerd under Cilium: its own plugins' directory; under the other
// networks, Debian's. Under every network the pods' namespaces are
// pinned under the node's own state directory, where Down finds them,
// not in the host's /run/netns among other clusters' pods'.
func TestContainerdConfigCilium(t *testing.T) {
	p := memberPaths("/d", multiMembers(2)[0])
	c := containerdConfig(p, "p:1", "/r", cniBinDir("/d"))
	for _, w := range []string{`bin_dir = "/d/cni/bin"`, "  netns_mounts_under_state_dir = true\n\n  [plugins.\"io.containerd.grpc.v1.cri\".containerd]"} {
		if !strings.Contains(c, w) {
			t.Errorf("cilium's containerd config lacks %q:\n%s", w, c)
		}
	}
	c = containerdConfig(p, "p:1", "/r", CNIBinDir)
	if !strings.Contains(c, `bin_dir = "/usr/lib/cni"`) || !strings.Contains(c, "enable_selinux = false\n  netns_mounts_under_state_dir = true\n") {
		t.Errorf("flannel's and macvlan's containerd config:\n%s", c)
	}
	if c := containerdConfig(pathsOf("/d"), "p:1", "", CNIBinDir); !strings.Contains(c, "netns_mounts_under_state_dir = true") || !strings.Contains(c, `state = "/d/containerd/state"`) {
		t.Errorf("the one node's pods' namespaces are not under its state directory:\n%s", c)
	}
}

// Cilium's user is system:masters, and only on a Cilium cluster.
func TestUsersCilium(t *testing.T) {
	find := func(cni string) *user {
		for _, u := range users([]string{"loadgen-node-1", "loadgen-node-2"}, cni) {
			if u.name == "cilium" {
				return &u
			}
		}
		return nil
	}
	if u := find(CNICilium); u == nil || u.cn != CiliumUser || !slices.Contains(u.orgs, "system:masters") {
		t.Errorf("cilium's user: %+v", u)
	}
	for _, cni := range []string{CNIFlannel, CNIMacvlan} {
		if u := find(cni); u != nil {
			t.Errorf("a %s cluster has cilium's user", cni)
		}
	}
}

// The kube-proxy replacement is Cilium's alone; Cilium needs its build and
// takes no Flannel backend.
func TestCheckCNICilium(t *testing.T) {
	for _, c := range []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Nodes: 2, CNI: CNICilium, Cilium: "/c"}, ""},
		{Config{Nodes: 2, CNI: CNICilium, Cilium: "/c", KubeProxyReplacement: true}, ""},
		{Config{Nodes: 2, CNI: CNICilium}, "call BuildCilium"},
		{Config{Nodes: 2, CNI: CNICilium, Cilium: "/c", Backend: FlannelVXLAN}, "not cilium"},
		{Config{Nodes: 2, Flanneld: "/f", KubeProxyReplacement: true}, "needs CNI cilium"},
		{Config{Nodes: 2, CNI: CNIMacvlan, KubeProxyReplacement: true}, "needs CNI cilium"},
		{Config{KubeProxyReplacement: true}, "needs CNI cilium"},
	} {
		err := c.cfg.checkCNI()
		switch {
		case c.wantErr == "" && (err != nil || c.cfg.CNI != CNICilium):
			t.Errorf("%+v: %v, CNI %q", c.cfg, err, c.cfg.CNI)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.wantErr)
		}
	}
	if !(&state{CNI: CNICilium}).multi() {
		t.Error("a cilium cluster's teardown would take the host's chains and bridge")
	}
}

// cilium-config says whether the kube-proxy replacement runs, as Helm's
// does (k8s paths reads it).
func TestCiliumConfigMap(t *testing.T) {
	for _, kpr := range []bool{false, true} {
		cm := ciliumConfigMap(kpr)
		if cm.Namespace != "kube-system" || cm.Name != "cilium-config" || cm.Data["kube-proxy-replacement"] != map[bool]string{false: "false", true: "true"}[kpr] {
			t.Errorf("kpr %v: %s/%s %v", kpr, cm.Namespace, cm.Name, cm.Data)
		}
	}
}

// Under Cilium, containerd runs its own plugins' directory (Debian's
// plugins and cilium-cni) and tells cilium-cni its node's agent; under
// the other networks, Debian's directory and no CILIUM_SOCK, as before.
func TestContainerdCNI(t *testing.T) {
	m := multiMembers(2)[1]
	p := memberPaths("/d", m)
	bin, env := containerdCNI("/d", CNICilium, p, m)
	if bin != "/d/cni/bin" || !slices.Contains(env, "CILIUM_SOCK=/d/nodes/loadgen-node-2/cilium/state/cilium.sock") || !slices.Contains(env, noPulls[0]) {
		t.Errorf("cilium: %s %q", bin, env)
	}
	for _, cni := range []string{CNIFlannel, CNIMacvlan, CNIBridge} {
		bin, env := containerdCNI("/d", cni, p, m)
		if bin != CNIBinDir || !slices.Equal(env, noPulls) {
			t.Errorf("%s: %s %q", cni, bin, env)
		}
	}

	debian, built, dir := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "bin")
	for _, f := range []string{"loopback", "portmap"} {
		if err := os.WriteFile(filepath.Join(debian, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // again: the links are made anew
		if err := linkCNIBinDir(dir, debian, built); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"loopback": filepath.Join(debian, "loopback"), "portmap": filepath.Join(debian, "portmap"), "cilium-cni": filepath.Join(built, "cilium-cni")} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s → %q (%v), want %s", name, got, err, want)
		}
	}
}

// The operator's script binds the cluster's run directory at the fixed
// /var/run/cilium before it runs the operator, so nothing it makes there
// lands in the host's.
func TestCiliumOperatorScript(t *testing.T) {
	s := ciliumOperatorScript("/d/cilium-operator/run")
	bind := "mount --bind /d/cilium-operator/run /var/run/cilium\n"
	if i, j := strings.Index(s, bind), strings.Index(s, `exec "$@"`); i < 0 || j < i || !strings.HasPrefix(s, "#!/bin/sh\n") {
		t.Errorf("the operator's script does not bind its run directory before it runs:\n%s", s)
	}
}

// A CNI configuration is written again in place: the same bytes and the
// same file (a write, which containerd reloads on; a new file is a
// creation, which it ignores).
func TestNudgeCNIConf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "05-cilium.conflist")
	want := []byte(`{"cniVersion":"1.0.0","name":"cilium"}`)
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := nudgeCNIConf(p); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, want) || !os.SameFile(before, after) {
		t.Errorf("nudge: %q (same file %v), want %q written in place", got, os.SameFile(before, after), want)
	}
	if err := nudgeCNIConf(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("nudge of a missing file: no error")
	}
}
