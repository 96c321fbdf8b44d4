package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cilium is several nodes' CNI with its eBPF datapath: cilium-agent on
// each node, as a host process in the node's network namespace and in a
// private mount namespace of its own (cilium-spike.md in the docnotes:
// some of its paths under /var/run/cilium are fixed in its code, and it
// enters every namespace pinned in /var/run/cilium/netns), its BPF
// compiled at run time by Debian's clang-16; one cilium-operator-generic
// in the host's namespace (it registers the CRDs the agents wait for);
// cilium-cni as the CNI plugin, which finds its node's agent by
// CILIUM_SOCK in containerd's environment. VXLAN tunnelling, IPAM from the
// Nodes' spec.podCIDR, with kube-proxy or with Cilium's kube-proxy
// replacement (socket LB on the node's cgroup2 subtree only).
//
// Two modules v1.20.2 needs are refused by the Go module proxy here, so
// the build is of a scratch module that requires Cilium with two
// replaces: github.com/osrg/gobgp/v4 at CiliumGoBGP (v1.20.2 pins a
// pseudo-version the proxy refuses; only the agent's BGP control plane,
// off by default, links it) and sigs.k8s.io/mcs-api/controllers by a
// local stub of the one constant Cilium uses from it (ciliumMCSStub;
// only the operator links it, for controllers that are off by default).
// Cilium's own sources are built as published.
const (
	CiliumModule  = "github.com/cilium/cilium"
	CiliumVersion = "v1.20.2"
	// CiliumGoBGP is the gobgp the build uses in place of v1.20.2's pin.
	CiliumGoBGP = "v4.8.0"
	// CiliumClang is the clang the agent runs as "clang" (Debian 12's
	// newest; its `clang` package would be clang-14).
	CiliumClang = "/usr/bin/clang-16"
	// CiliumUser is the agents' and the operator's identity (system:masters:
	// cluster-admin, a simplification of Cilium's ClusterRoles for a test
	// cluster, as the API server's kubelet client has here).
	CiliumUser = "loadgen-cilium"
	// PortCiliumOperator is the operator's API (health), on the control
	// plane's address rather than its default localhost:9234.
	PortCiliumOperator = 9234
)

// ciliumMCSStub stands in for sigs.k8s.io/mcs-api/controllers: Cilium
// v1.20.2 references only DerivedServiceAnnotation from it
// (pkg/clustermesh/mcsapi, operator/pkg/gateway-api/helpers), with
// upstream's value.
const ciliumMCSStub = `// Package controllers stands in for sigs.k8s.io/mcs-api/controllers, which the
// Go module proxy refuses at every version. Cilium v1.20.2 references only
// DerivedServiceAnnotation from it; the value is upstream's.
package controllers

// DerivedServiceAnnotation annotates a ServiceImport with its derived Service's name.
const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
`

// ciliumModuleFiles are the scratch module's files, by path under it.
func ciliumModuleFiles() map[string]string {
	return map[string]string{
		"go.mod": "module loadgen.local/cilium\n\ngo 1.26.0\n\n" +
			"require " + CiliumModule + " " + CiliumVersion + "\n\n" +
			"replace github.com/osrg/gobgp/v4 => github.com/osrg/gobgp/v4 " + CiliumGoBGP + "\n\n" +
			"replace sigs.k8s.io/mcs-api/controllers => ./mcsstub\n",
		"tools.go": "//go:build tools\n\npackage cilium\n\nimport (\n" +
			"\t_ \"" + CiliumModule + "/daemon\"\n" +
			"\t_ \"" + CiliumModule + "/operator/cmd\"\n" +
			"\t_ \"" + CiliumModule + "/plugins/cilium-cni\"\n)\n",
		"mcsstub/go.mod":         "module sigs.k8s.io/mcs-api/controllers\n\ngo 1.22\n",
		"mcsstub/controllers.go": ciliumMCSStub,
	}
}

// ciliumBuilds are the three binaries: name, package, build tags (as
// Cilium's Makefiles give them: osusergo for all, ipam_provider_operator
// for the generic operator).
var ciliumBuilds = []struct{ name, pkg, tags string }{
	{"cilium-cni", CiliumModule + "/plugins/cilium-cni", "osusergo"},
	{"cilium-agent", CiliumModule + "/daemon", "osusergo"},
	{"cilium-operator-generic", CiliumModule + "/operator", "osusergo,ipam_provider_operator"},
}

// ciliumLdflags strip the binaries and stamp the version, as Makefile.defs
// does (without it the agent reports "(v-)").
func ciliumLdflags() string {
	return "-s -w -X " + CiliumModule + "/pkg/version.ciliumVersion=" + strings.TrimPrefix(CiliumVersion, "v")
}

// BuildCilium builds cilium-agent, cilium-operator-generic and cilium-cni
// at CiliumVersion from the scratch module (ciliumModuleFiles), or finds
// them built, in the node's build cache: cilium-VERSION/ holds the three,
// lib/bpf (the module's BPF sources, which the agent compiles at run
// time; copied, as GOMODCACHE may be cleaned) and clang/clang (a link to
// CiliumClang). A .built mark, written last, says the directory is whole.
// Cold, the build takes about 36 minutes on two busy CPUs and the agent's
// link 3 GB of memory: it runs one build at a time (-p 1).
func BuildCilium(ctx context.Context, o BuildOptions) (string, error) {
	cache, err := cacheDir(o.Cache)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "cilium-"+CiliumVersion)
	if _, err := os.Stat(filepath.Join(dir, ".built")); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(CiliumClang); err != nil {
		return "", fmt.Errorf("cilium's agent compiles its BPF with %s: apt-get install clang-16 llvm-16", CiliumClang)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	say := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "node build: "+format+"\n", a...)
		}
	}
	t0 := time.Now()
	say("building cilium %s from its module (cold: 13 to 36 minutes)", CiliumVersion)
	mod := filepath.Join(dir, "src")
	for name, text := range ciliumModuleFiles() {
		if err := writeFile(filepath.Join(mod, name), []byte(text)); err != nil {
			return "", err
		}
	}
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
	if err := goToolNice(ctx, o.Nice, mod, env, "mod", "tidy"); err != nil {
		return "", err
	}
	for _, b := range ciliumBuilds {
		tmp := filepath.Join(dir, b.name+".tmp")
		// No -trimpath: the agent's 2108 packages then share the Go build
		// cache's entries with a plain build of the same module (the spike's).
		if err := goToolNice(ctx, o.Nice, mod, env, "build", "-p", "1", "-tags", b.tags,
			"-ldflags", ciliumLdflags(), "-o", tmp, b.pkg); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, filepath.Join(dir, b.name)); err != nil {
			return "", err
		}
		say("%s built (%v so far)", b.name, time.Since(t0).Round(time.Second))
	}
	cmd := exec.CommandContext(ctx, goCommand(), "list", "-m", "-f", "{{.Dir}}", CiliumModule)
	cmd.Dir, cmd.Env = mod, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", fmt.Errorf("go list -m %s: %v", CiliumModule, err)
	}
	lib := filepath.Join(dir, "lib")
	if err := os.RemoveAll(lib); err != nil {
		return "", err
	}
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return "", err
	}
	if _, err := run(ctx, "cp", "-r", filepath.Join(strings.TrimSpace(string(out)), "bpf"), filepath.Join(lib, "bpf")); err != nil {
		return "", err
	}
	if _, err := run(ctx, "chmod", "-R", "u+w", lib); err != nil {
		return "", err
	}
	clang := filepath.Join(dir, "clang", "clang")
	_ = os.Remove(clang)
	if err := os.MkdirAll(filepath.Dir(clang), 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(CiliumClang, clang); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ".built"), []byte(CiliumVersion+"\n"), 0o644); err != nil {
		return "", err
	}
	say("cilium %s built in %v", CiliumVersion, time.Since(t0).Round(time.Second))
	return dir, nil
}

// ciliumDirs are where a node's agent keeps its own: D = DIR/nodes/NAME/cilium.
type ciliumDirs struct {
	dir     string // D
	run     string // bound at /var/run/cilium in the agent's mount namespace
	state   string // --state-dir: generated headers, objects, endpoints, the API socket
	bpffs   string // --bpf-root: a bpffs the agent mounts in its mount namespace
	cgroup  string // --cgroup-root: a bind of the node's cgroup2 subtree
	script  string // the mount namespace's preamble (ciliumAgentScript)
	sock    string // the agent's API socket (CILIUM_SOCK for cilium-cni)
	netns   string // the node's containerd's netns directory (netns_mounts_under_state_dir)
	cgroup2 string // the node's cgroup2 subtree in the host: /sys/fs/cgroup/unified/CGROUPROOT
}

// ciliumRunDir is the agent's fixed directory (pkg/defaults.RuntimePath).
const ciliumRunDir = "/var/run/cilium"

func ciliumDirsOf(p paths, m Member) ciliumDirs {
	d := filepath.Join(p.dir, "cilium")
	state := filepath.Join(d, "state")
	return ciliumDirs{
		dir: d, run: filepath.Join(d, "run"), state: state,
		bpffs: filepath.Join(d, "bpffs"), cgroup: filepath.Join(d, "cgroup"),
		script: filepath.Join(d, "cilium-agent.sh"), sock: filepath.Join(state, "cilium.sock"),
		netns:   filepath.Join(p.containerdState, "io.containerd.grpc.v1.cri", "netns"),
		cgroup2: filepath.Join("/sys/fs/cgroup/unified", m.CgroupRoot),
	}
}

// ciliumSysctls are the host-wide sysctls the agent writes at start
// (pkg/datapath/loader/base.go, errors ignored): read-only in its mount
// namespace, they stay as they are (unprivileged_bpf_disabled 2 → 1
// could not be undone until reboot).
var ciliumSysctls = []string{"/proc/sys/kernel/timer_migration", "/proc/sys/kernel/unprivileged_bpf_disabled"}

// ciliumAgentScript is the agent's preamble, run by sh in the node's
// network namespace and a private mount namespace (slave of the host's):
// the two sysctls read-only, /var/run/cilium the node's own with its
// netns directory the node's containerd's (so the agent enters only its
// own pods' namespaces), the node's cgroup2 subtree as the cgroup root,
// clang-16 as clang on PATH, the node's name. It then runs "$@": the
// agent and its arguments.
func ciliumAgentScript(d ciliumDirs, built, node string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# cilium-agent's mount namespace (node/cilium.go).\nset -e\n")
	for _, f := range ciliumSysctls {
		fmt.Fprintf(&b, "mount --bind %s %s\nmount -o remount,bind,ro %s\n", f, f, f)
	}
	fmt.Fprintf(&b, "mkdir -p %s/netns\n", d.run)
	fmt.Fprintf(&b, "mount --bind %s %s\n", d.run, ciliumRunDir)
	fmt.Fprintf(&b, "mount --bind %s %s/netns\n", d.netns, ciliumRunDir)
	fmt.Fprintf(&b, "mount --bind %s %s\n", d.cgroup2, d.cgroup)
	fmt.Fprintf(&b, "export PATH=%s:$PATH\n", filepath.Join(built, "clang"))
	fmt.Fprintf(&b, "export K8S_NODE_NAME=%s\n", node)
	b.WriteString("exec \"$@\"\n")
	return b.String()
}

// ciliumOperatorScript runs the operator with run bound at its fixed
// run directory, in the mount namespace unshare made.
func ciliumOperatorScript(run string) string {
	return "#!/bin/sh\n# cilium-operator's mount namespace (node/cilium.go).\nset -e\n" +
		fmt.Sprintf("mount --bind %s %s\n", run, ciliumRunDir) + "exec \"$@\"\n"
}

// ciliumAgentArgs are a node's agent's flags: VXLAN tunnelling, IPAM from
// its Node's podCIDR, CRD identities, IPv4 only, no L7 proxy, health
// checks nor Hubble, its uplink as its device, its own directories, its
// CNI configuration written once it is ready; the kube-proxy replacement
// when kpr.
func ciliumAgentArgs(d ciliumDirs, p paths, m Member, built, kubeconfig string, kpr bool) []string {
	args := []string{
		"--k8s-kubeconfig-path", kubeconfig, "--identity-allocation-mode", "crd", "--cluster-name", "default",
		"--routing-mode", "tunnel", "--tunnel-protocol", "vxlan", "--ipam", "kubernetes", "--k8s-require-ipv4-pod-cidr",
		"--enable-ipv4", "--enable-ipv6=false", "--enable-l7-proxy=false", "--enable-health-checking=false",
		"--enable-endpoint-health-checking=false", "--enable-hubble=false", "--devices", m.Uplink,
		"--bpf-root", d.bpffs, "--cgroup-root", d.cgroup, "--lib-dir", filepath.Join(built, "lib"), "--state-dir", d.state,
		"--socket-path", d.sock, "--cni-log-file", filepath.Join(d.state, "cilium-cni.log"),
		"--write-cni-conf-when-ready", filepath.Join(p.cniConfDir, ciliumConflist),
	}
	if kpr {
		args = append(args, "--kube-proxy-replacement=true")
	}
	return args
}

// ciliumConflist is the CNI configuration the agent writes when ready.
const ciliumConflist = "05-cilium.conflist"

// ciliumOperatorArgs are the operator's flags: IPAM kubernetes, CRD
// identities, no metrics nor gops, its API on the control plane's address
// (not on loopback, where tests listen).
func ciliumOperatorArgs(kubeconfig string, a Addresses) []string {
	return []string{
		"--k8s-kubeconfig-path", kubeconfig, "--ipam", "kubernetes", "--cluster-name", "default",
		"--identity-allocation-mode", "crd", "--enable-metrics=false", "--enable-gops=false",
		"--operator-api-serve-addr", net.JoinHostPort(a.NodeIP, strconv.Itoa(PortCiliumOperator)),
	}
}

// ciliumConfigMap is the ConfigMap kube-system/cilium-config as Cilium's
// Helm chart publishes it, with the settings the agents run with: where a
// cluster's tools (k8s paths) read whether the kube-proxy replacement
// serves the Services. The agents here take flags, not this map.
func ciliumConfigMap(kpr bool) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cilium-config", Namespace: "kube-system"},
		Data: map[string]string{
			"kube-proxy-replacement": strconv.FormatBool(kpr), "routing-mode": "tunnel", "tunnel-protocol": "vxlan",
			"ipam": "kubernetes", "identity-allocation-mode": "crd", "cluster-name": "default",
		}}
}

// cniBinDir is the CNI plugins' directory of a cluster on cilium: Debian's
// plugins linked, beside cilium-cni (Debian's directory is a package's).
func cniBinDir(dir string) string { return filepath.Join(dir, "cni", "bin") }

// makeCNIBinDir fills cniBinDir with links to Debian's plugins and to the
// built cilium-cni.
func makeCNIBinDir(dir, built string) error { return linkCNIBinDir(cniBinDir(dir), CNIBinDir, built) }

// linkCNIBinDir links every plugin of debian and the built cilium-cni in bin.
func linkCNIBinDir(bin, debian, built string) error {
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(debian)
	if err != nil {
		return err
	}
	links := map[string]string{"cilium-cni": filepath.Join(built, "cilium-cni")}
	for _, e := range ents {
		links[e.Name()] = filepath.Join(debian, e.Name())
	}
	for name, target := range links {
		l := filepath.Join(bin, name)
		_ = os.Remove(l)
		if err := os.Symlink(target, l); err != nil {
			return err
		}
	}
	return nil
}

// ciliumSharedNetns makes a node's containerd netns directory a shared
// mount in the host, so that a pod's namespace pinned there after its
// agent started propagates into the agent's mount namespace (a slave of
// it). Down unmounts it with everything under the state directory.
func ciliumSharedNetns(ctx context.Context, d ciliumDirs) error {
	if err := os.MkdirAll(d.netns, 0o755); err != nil {
		return err
	}
	for _, s := range [][]string{{"--bind", d.netns, d.netns}, {"--make-shared", d.netns}} {
		if _, err := run(ctx, "mount", s...); err != nil {
			return err
		}
	}
	return nil
}

// startCilium starts the operator, then every node's agent, waits for each
// agent's CNI configuration and for every node to route the others' pods
// through cilium_host (VXLAN on cilium_vxlan).
func (n *Node) startCilium(ctx context.Context) error {
	kc := filepath.Join(n.Dir, "cilium.kubeconfig")
	cm := ciliumConfigMap(n.KubeProxyReplacement)
	if _, err := n.Client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ConfigMap kube-system/cilium-config: %w", err)
	}
	n.say("cilium-operator-generic %s", CiliumVersion)
	// The operator makes /var/run/cilium and serves its shell there
	// (pkg/defaults.RuntimePath, no flag): in a mount namespace of its own
	// with the cluster's directory bound there, the host's stays empty
	// (the first node run found shell.sock left in the host's /run/cilium).
	opRun, opScript := filepath.Join(n.Dir, "cilium-operator", "run"), filepath.Join(n.Dir, "cilium-operator", "operator.sh")
	if err := os.MkdirAll(opRun, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(ciliumRunDir, 0o755); err != nil {
		return err
	}
	if err := writeFile(opScript, []byte(ciliumOperatorScript(opRun))); err != nil {
		return err
	}
	op, err := n.launch("cilium-operator", "unshare", append([]string{"--mount", "--propagation", "slave", "--",
		"sh", opScript, filepath.Join(n.Cilium, "cilium-operator-generic")}, ciliumOperatorArgs(kc, n.Addr)...),
		"CILIUM_K8S_NAMESPACE=kube-system")
	if err != nil {
		return err
	}
	var procs []*Proc
	for _, m := range n.Members {
		n.say("cilium-agent%s%s", map[bool]string{true: " (kube-proxy replacement)"}[n.KubeProxyReplacement], n.on(m))
		p := n.mpaths(m)
		d := ciliumDirsOf(p, m)
		for _, dd := range []string{d.run, d.state, d.bpffs, d.cgroup, d.cgroup2} {
			if err := os.MkdirAll(dd, 0o755); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(ciliumRunDir, 0o755); err != nil {
			return err
		}
		if err := ciliumSharedNetns(ctx, d); err != nil {
			return err
		}
		if err := writeFile(d.script, []byte(ciliumAgentScript(d, n.Cilium, m.Name))); err != nil {
			return err
		}
		args := append([]string{"--mount", "--propagation", "slave", "--", "nsenter", "--net=" + netnsPath(m.Netns), "--",
			"sh", d.script, filepath.Join(n.Cilium, "cilium-agent")},
			ciliumAgentArgs(d, p, m, n.Cilium, kc, n.KubeProxyReplacement)...)
		pr, err := n.launch(procName("cilium-agent", m), "unshare", args)
		if err != nil {
			return err
		}
		procs = append(procs, pr)
	}
	for i, m := range n.Members {
		conf := filepath.Join(n.mpaths(m).cniConfDir, ciliumConflist)
		if err := procs[i].waitFor(ctx, 5*time.Minute, func(context.Context) error {
			if !op.alive() {
				return op.failure(errors.New("cilium-operator exited"))
			}
			_, err := os.Stat(conf)
			return err
		}); err != nil {
			return err
		}
		if err := nudgeCNIConf(conf); err != nil {
			return err
		}
	}
	for i, m := range n.Members {
		if err := procs[i].waitFor(ctx, 60*time.Second, func(ctx context.Context) error { return n.ciliumRoutes(ctx, m) }); err != nil {
			return err
		}
		// A node's own connections to a ClusterIP: kube-proxy's DNAT in
		// OUTPUT comes after the route lookup, which fails without a route
		// for the Service range (a node here has no default route), so
		// curl got "Network is unreachable" at once. Cilium's socket LB
		// (the replacement) translates before routing and needs none.
		if _, err := m.run(ctx, "ip", "route", "replace", n.Addr.ServiceCIDR, "dev", "eth0"); err != nil {
			return err
		}
	}
	return nil
}

// nudgeCNIConf writes a CNI configuration file again, in place, with the
// same bytes. containerd 1.6 reloads its CNI configuration on a write, a
// rename or a removal in its directory and ignores a creation
// (pkg/cri/server/cni_conf_syncer.go: "Only reload config when receiving
// write/rename/remove events"); the agent creates its conflist under a
// temporary name, removes that and creates the file, so whether containerd
// saw the file depended on when its reload for the removal ran: one node of
// two waited "cni plugin not initialized" for good. A write in place
// is an event containerd acts on.
func nudgeCNIConf(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// ciliumRoutes is a check: the member has cilium_vxlan and routes every
// other member's pods through cilium_host.
func (n *Node) ciliumRoutes(ctx context.Context, m Member) error {
	if _, err := m.run(ctx, "ip", "link", "show", "cilium_vxlan"); err != nil {
		return fmt.Errorf("%s has no cilium_vxlan yet: %v", m.Name, err)
	}
	return n.otherNodes(ctx, m, func(o Member, nd *corev1.Node) error {
		_, sub, err := net.ParseCIDR(nd.Spec.PodCIDR)
		if err != nil {
			return fmt.Errorf("node %s podCIDR %q: %v", o.Name, nd.Spec.PodCIDR, err)
		}
		ip := slices.Clone(sub.IP.To4())
		ip[3]++
		out, err := m.run(ctx, "ip", "-4", "route", "get", ip.String())
		if err != nil {
			return fmt.Errorf("%s has no route to %s's pods yet: %v", m.Name, o.Name, err)
		}
		if !strings.Contains(out, "dev cilium_host") {
			return fmt.Errorf("%s routes %s's pods as %q, not through cilium_host yet", m.Name, o.Name, strings.TrimSpace(out))
		}
		return nil
	})
}

// CiliumServiceRealized tells whether member m's agent has written the
// Service frontend ip:port into its BPF maps with an active backend: its
// API's GET /v1/service, each service's status.realized (what the agent
// programmed, not what it was told).
func (n *Node) CiliumServiceRealized(ctx context.Context, m Member, ip string, port int) (bool, error) {
	sock := ciliumDirsOf(n.mpaths(m), m).sock
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://cilium/v1/service", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("%s's agent: %w", m.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s's agent: GET /v1/service: %s", m.Name, resp.Status)
	}
	var svcs []struct {
		Status struct {
			Realized struct {
				Frontend struct {
					IP   string `json:"ip"`
					Port int    `json:"port"`
				} `json:"frontend-address"`
				Backends []struct {
					State string `json:"state"`
				} `json:"backend-addresses"`
			} `json:"realized"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&svcs); err != nil {
		return false, fmt.Errorf("%s's agent: GET /v1/service: %w", m.Name, err)
	}
	for _, s := range svcs {
		r := s.Status.Realized
		if r.Frontend.IP != ip || r.Frontend.Port != port {
			continue
		}
		for _, b := range r.Backends {
			if b.State == "" || b.State == "active" {
				return true, nil
			}
		}
	}
	return false, nil
}
