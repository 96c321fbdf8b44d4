package node

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Flannel is several nodes' CNI: flanneld from its Go module, one per
// node in the node's network namespace, with its kube subnet manager
// (each node's subnet is the spec.podCIDR the controller manager
// allocates from the cluster's pod network), its backend switched per run.
//
// Flannel's CNI plugin (github.com/flannel-io/cni-plugin) is not served by
// the Go module proxy here, so the node does what that plugin does on
// each ADD: it reads the node's subnet.env (flanneld's --subnet-file) and
// writes the configuration the plugin would delegate to the bridge plugin
// (flannelCNIConfig), Debian's bridge and host-local plugins then doing
// the work, as they do under the flannel plugin.
const (
	FlannelModule  = "github.com/flannel-io/flannel"
	FlannelVersion = "v0.28.10"
	// FlannelUser is flanneld's identity, bound to Flannel's ClusterRole
	// (kube-flannel.yml's rules).
	FlannelUser = "loadgen-flannel"
	// PortFlannelHealthz is flanneld's /healthz on each node's address.
	PortFlannelHealthz = 8081
)

// Flannel's backends the node runs. v0.28.10 also has ipip, wireguard,
// ipsec (which needs strongSwan's charon), alloc and extension, and the
// cloud ones (gce, aws-vpc, ali-vpc, tencent-vpc), which need their
// clouds; the node does not run those. Its udp backend is cgo on amd64
// (its C proxy): the binary is built with cgo where a C compiler is, and
// says so when not.
const (
	FlannelVXLAN  = "vxlan"
	FlannelHostGW = "host-gw"
	FlannelUDP    = "udp"
)

// FlannelBackends are the backends Start and SetBackend take, in the
// order of the study (Flannel's own overhead, least first).
var FlannelBackends = []string{FlannelHostGW, FlannelVXLAN, FlannelUDP}

func checkBackend(b string) error {
	if !slices.Contains(FlannelBackends, b) {
		return fmt.Errorf("flannel backend %q: want one of %s", b, strings.Join(FlannelBackends, ", "))
	}
	return nil
}

// BuildFlannel builds flanneld from its module at FlannelVersion, or finds
// it built (kept beside the node's other builds). The module's main
// package registers every backend, and the tencent-vpc one needs a module
// the Go module proxy here refuses (403), so the build is of a copy of the
// module's main package without that one import line: the same flanneld
// without the Tencent Cloud backend. With cgo (a C compiler on the
// machine, as Flannel's own Makefile builds amd64) it has the udp
// backend; without, the udp backend's import goes too and the binary
// says so (FlannelHasUDP).
func BuildFlannel(ctx context.Context, o BuildOptions) (string, error) {
	cache, err := cacheDir(o.Cache)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "flannel-"+FlannelVersion, "flanneld")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	t0 := time.Now()
	say := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "node build: "+format+"\n", a...)
		}
	}
	say("building flanneld %s from its module", FlannelVersion)
	cmd := exec.CommandContext(ctx, goCommand(), "mod", "download", "-json", FlannelModule+"@"+FlannelVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", FlannelModule, FlannelVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s%v", FlannelModule, FlannelVersion, mod.Error, err)
	}
	src := bin + ".src"
	if err := os.RemoveAll(src); err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	if _, err := run(ctx, "cp", "-r", mod.Dir, src); err != nil {
		return "", err
	}
	if _, err := run(ctx, "chmod", "-R", "u+w", src); err != nil {
		return "", err
	}
	cgo := haveCC()
	drop := []string{FlannelModule + "/pkg/backend/tencentvpc"}
	if !cgo {
		drop = append(drop, FlannelModule+"/pkg/backend/udp")
	}
	main := filepath.Join(src, "main.go")
	b, err := os.ReadFile(main)
	if err != nil {
		return "", err
	}
	var kept []string
	dropped := 0
	for _, l := range strings.Split(string(b), "\n") {
		if slices.ContainsFunc(drop, func(p string) bool { return strings.TrimSpace(l) == `_ "`+p+`"` }) {
			dropped++
			continue
		}
		kept = append(kept, l)
	}
	if dropped != len(drop) {
		return "", fmt.Errorf("flannel %s's main.go: found %d of the backend imports %v", FlannelVersion, dropped, drop)
	}
	if err := os.WriteFile(main, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		return "", err
	}
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
	if cgo {
		env[0] = "CGO_ENABLED=1"
	}
	tmp := bin + ".tmp"
	ldflags := "-s -w -X " + FlannelModule + "/pkg/version.Version=" + FlannelVersion
	if err := goToolNice(ctx, o.Nice, src, env, "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, "."); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(bin), "backends"), []byte(strings.Join(builtBackends(cgo), "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	say("flanneld %s built in %v (%s; backends here: %s)", FlannelVersion, time.Since(t0).Round(time.Second), env[0], strings.Join(builtBackends(cgo), ", "))
	return bin, nil
}

func builtBackends(cgo bool) []string {
	if cgo {
		return FlannelBackends
	}
	return []string{FlannelHostGW, FlannelVXLAN}
}

// FlannelHasBackend tells whether the flanneld at bin was built with a
// backend of FlannelBackends.
func FlannelHasBackend(bin, backend string) bool {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "backends"))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Fields(string(b)), backend)
}

// haveCC tells whether cgo can build here (the go command's C compiler).
func haveCC() bool {
	out, err := exec.Command(goCommand(), "env", "CC").Output()
	if err != nil {
		return false
	}
	cc := strings.Fields(strings.TrimSpace(string(out)))
	if len(cc) == 0 {
		return false
	}
	_, err = exec.LookPath(cc[0])
	return err == nil
}

// flannelRBAC is Flannel's ClusterRole as kube-flannel.yml gives it, bound
// to flanneld's user.
func (n *Node) flannelRBAC(ctx context.Context) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flannel"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
	}}
	if _, err := n.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRole flannel: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flannel"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: "rbac.authorization.k8s.io", Name: FlannelUser}},
	}
	if _, err := n.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRoleBinding flannel: %w", err)
	}
	return nil
}

// flannelNetConf is flanneld's net-conf.json: the pod network and the
// backend, iptables (not nftables) as kube-flannel.yml's default.
func flannelNetConf(a Addresses, backend string) []byte {
	b, _ := json.MarshalIndent(map[string]any{
		"Network":        a.PodCIDR,
		"EnableNFTables": false,
		"Backend":        map[string]any{"Type": backend},
	}, "", "  ")
	return append(b, '\n')
}

func (n *Node) flannelConfPath() string { return filepath.Join(n.Dir, "flannel", "net-conf.json") }

// subnetFile is where a node's flanneld writes its subnet.env.
func subnetFile(p paths) string { return filepath.Join(p.dir, "flannel", "subnet.env") }

// startFlannel writes net-conf.json and starts flanneld on every node,
// then writes each node's CNI configuration from its subnet.env and waits
// until every node routes to every other node's pods.
func (n *Node) startFlannel(ctx context.Context) error {
	if !FlannelHasBackend(n.Flanneld, n.Backend) {
		return fmt.Errorf("flannel backend %s: the flanneld at %s was built without it (the udp backend is cgo: no C compiler)", n.Backend, n.Flanneld)
	}
	if err := writeFile(n.flannelConfPath(), flannelNetConf(n.Addr, n.Backend)); err != nil {
		return err
	}
	var procs []*Proc
	for _, m := range n.Members {
		n.say("flanneld (%s)%s", n.Backend, n.on(m))
		p := n.mpaths(m)
		sf := subnetFile(p)
		if err := os.MkdirAll(filepath.Dir(sf), 0o755); err != nil {
			return err
		}
		_ = os.Remove(sf)
		bin, args := m.inNetns(n.Flanneld,
			"--kube-subnet-mgr", "--kubeconfig-file", filepath.Join(n.Dir, "flannel.kubeconfig"),
			"--net-config-path", n.flannelConfPath(), "--subnet-file", sf,
			"--iface", m.Uplink, "--ip-masq",
			"--healthz-ip", m.IP, "--healthz-port", strconv.Itoa(PortFlannelHealthz),
			"--v=1")
		pr, err := n.launch(procName("flanneld", m), bin, args, "NODE_NAME="+m.Name)
		if err != nil {
			return err
		}
		procs = append(procs, pr)
	}
	for i, m := range n.Members {
		p := n.mpaths(m)
		var env subnetEnv
		if err := procs[i].waitFor(ctx, 60*time.Second, func(context.Context) error {
			var err error
			env, err = readSubnetEnv(subnetFile(p))
			return err
		}); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(p.cniConfDir, "10-flannel.conflist"), []byte(flannelCNIConfig(p, n.Addr, env))); err != nil {
			return err
		}
	}
	for i, m := range n.Members {
		if err := procs[i].waitFor(ctx, 60*time.Second, func(ctx context.Context) error { return n.flannelRoutes(ctx, m) }); err != nil {
			return err
		}
	}
	return nil
}

// flannelRoutes is a check: the member routes to every other member's pod
// subnet through the backend's device (vxlan: flannel.1, udp: flannel0)
// or the other node's address (host-gw).
func (n *Node) flannelRoutes(ctx context.Context, m Member) error {
	return n.otherNodes(ctx, m, func(o Member, nd *corev1.Node) error {
		if bt := annotatedBackend(nd.Annotations); bt != n.Backend {
			return fmt.Errorf("node %s's flanneld runs backend %q, not %s yet", o.Name, bt, n.Backend)
		}
		_, sub, err := net.ParseCIDR(nd.Spec.PodCIDR)
		if err != nil {
			return fmt.Errorf("node %s podCIDR %q: %v", o.Name, nd.Spec.PodCIDR, err)
		}
		gw := slices.Clone(sub.IP.To4())
		gw[3]++
		out, err := m.run(ctx, "ip", "-4", "route", "get", gw.String())
		if err != nil {
			return fmt.Errorf("%s has no route to %s's pods yet: %v", m.Name, o.Name, err)
		}
		want := map[string]string{FlannelVXLAN: "dev flannel.1", FlannelUDP: "dev flannel0", FlannelHostGW: "via " + o.IP + " dev " + m.Uplink}[n.Backend]
		if !strings.Contains(out, want) {
			return fmt.Errorf("%s routes %s's pods as %q, not %q yet", m.Name, o.Name, strings.TrimSpace(out), want)
		}
		return nil
	})
}

// otherNodes calls f with every member but m and its Node object.
func (n *Node) otherNodes(ctx context.Context, m Member, f func(o Member, nd *corev1.Node) error) error {
	for _, o := range n.Members {
		if o.Name == m.Name {
			continue
		}
		nd, err := n.Client.CoreV1().Nodes().Get(ctx, o.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := f(o, nd); err != nil {
			return err
		}
	}
	return nil
}

// annotatedBackend is the backend a node's flanneld published: its
// flannel.alpha.coreos.com/backend-type, which the udp backend (v0.28)
// leaves empty on a node the kube subnet manager manages.
func annotatedBackend(a map[string]string) string {
	b, ok := a["flannel.alpha.coreos.com/backend-type"]
	if ok && b == "" && a["flannel.alpha.coreos.com/kube-subnet-manager"] == "true" {
		return FlannelUDP
	}
	return b
}

// subnetEnv is what flanneld writes to its --subnet-file.
type subnetEnv struct {
	Network string // FLANNEL_NETWORK: the whole pod network
	Subnet  string // FLANNEL_SUBNET: this node's, as the bridge's address/len
	MTU     int    // FLANNEL_MTU: the backend's
	IPMasq  bool   // FLANNEL_IPMASQ: flanneld masquerades what leaves the pod network
}

// readSubnetEnv reads a subnet.env, as Flannel's CNI plugin does
// (loadFlannelSubnetEnv): every field present, or an error naming those missing.
func readSubnetEnv(path string) (subnetEnv, error) {
	var e subnetEnv
	f, err := os.Open(path)
	if err != nil {
		return e, err
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		switch k {
		case "FLANNEL_NETWORK":
			if _, _, err := net.ParseCIDR(v); err != nil {
				return e, fmt.Errorf("%s: %s: %v", path, k, err)
			}
			e.Network = v
		case "FLANNEL_SUBNET":
			if _, _, err := net.ParseCIDR(v); err != nil {
				return e, fmt.Errorf("%s: %s: %v", path, k, err)
			}
			e.Subnet = v
		case "FLANNEL_MTU":
			if e.MTU, err = strconv.Atoi(v); err != nil {
				return e, fmt.Errorf("%s: %s: %v", path, k, err)
			}
		case "FLANNEL_IPMASQ":
			e.IPMasq = v == "true"
		default:
			continue
		}
		seen[k] = true
	}
	if err := sc.Err(); err != nil {
		return e, err
	}
	var missing []string
	for _, k := range []string{"FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_MTU", "FLANNEL_IPMASQ"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("%s is missing %s", path, strings.Join(missing, ", "))
	}
	return e, nil
}

// flannelCNIConfig is what Flannel's CNI plugin delegates to the bridge
// plugin from a subnet.env (its doCmdAdd and getDelegateIPAM): type bridge
// (its default bridge, cni0, each node's in its own namespace), ipMasq
// the opposite of FLANNEL_IPMASQ (flanneld masquerades, so the bridge
// plugin does not), mtu FLANNEL_MTU, isGateway, and host-local IPAM on the
// node's subnet with a route to FLANNEL_NETWORK; hairpinMode from
// kube-flannel.yml's delegate. Where kube-flannel.yml makes the bridge
// the pods' default gateway (isDefaultGateway), the pods here get routes
// to the Services, the underlay and the control plane only: no default
// route, so nothing a pod sends can leave the machine. portmap follows,
// as in kube-flannel.yml.
func flannelCNIConfig(p paths, a Addresses, e subnetEnv) string {
	_, sub, _ := net.ParseCIDR(e.Subnet)
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "cbr0",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "cni0",
				"isGateway":   true,
				"ipMasq":      !e.IPMasq,
				"hairpinMode": true,
				"mtu":         e.MTU,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": p.cniIPAM,
					"ranges":  [][]map[string]string{{{"subnet": sub.String()}}},
					"routes": []map[string]string{
						{"dst": a.ServiceCIDR}, {"dst": a.Underlay}, {"dst": e.Network},
					},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n"
}

// SetBackend restarts every node's flanneld with another backend, as an
// operator changing kube-flannel-cfg and restarting the DaemonSet does,
// but with the old backend's devices and routes removed first (a
// flanneld that stops leaves them): the new network is the new backend's
// alone. Pods started before keep their MTU; pods started after get the
// backend's. It waits until every node routes to every other's pods
// through the new backend.
func (n *Node) SetBackend(ctx context.Context, backend string) error {
	if n.CNI != CNIFlannel {
		return errors.New("the one node runs the bridge plugin, not Flannel")
	}
	if err := checkBackend(backend); err != nil {
		return err
	}
	if !FlannelHasBackend(n.Flanneld, backend) {
		return fmt.Errorf("flannel backend %s: the flanneld at %s was built without it", backend, n.Flanneld)
	}
	if n.Backend == backend {
		running := true
		for _, m := range n.Members {
			if p := n.proc(procName("flanneld", m)); p == nil || !p.alive() {
				running = false
			}
		}
		if running {
			return nil
		}
	}
	n.say("flannel: %s → %s", n.Backend, backend)
	for _, m := range n.Members {
		if p := n.proc(procName("flanneld", m)); p != nil {
			p.stop(10 * time.Second)
			if err := n.forget(p.Name); err != nil {
				return err
			}
		}
	}
	for _, m := range n.Members {
		if err := n.clearBackend(ctx, m); err != nil {
			return err
		}
	}
	n.Backend = backend
	n.mu.Lock()
	n.st.Backend = backend
	err := n.st.save()
	n.mu.Unlock()
	if err != nil {
		return err
	}
	return n.startFlannel(ctx)
}

// clearBackend removes a stopped flanneld's devices and its routes to the
// other nodes' pods from a node's namespace.
func (n *Node) clearBackend(ctx context.Context, m Member) error {
	for _, dev := range []string{"flannel.1", "flannel0"} {
		if _, err := m.run(ctx, "ip", "link", "show", dev); err == nil {
			if _, err := m.run(ctx, "ip", "link", "del", dev); err != nil {
				return err
			}
		}
	}
	return n.otherNodes(ctx, m, func(_ Member, nd *corev1.Node) error {
		if out, err := m.run(ctx, "ip", "-4", "route", "show", nd.Spec.PodCIDR); err == nil && strings.TrimSpace(out) != "" {
			if _, err := m.run(ctx, "ip", "-4", "route", "del", nd.Spec.PodCIDR); err != nil {
				return err
			}
		}
		return nil
	})
}

// FlannelDevices are the backend's devices on a node (flannel.1, flannel0),
// as `ip -d link` shows them, for a test to see what carries the pods'
// packets.
func (n *Node) FlannelDevices(ctx context.Context, m Member) (string, error) {
	var b strings.Builder
	for _, dev := range []string{"flannel.1", "flannel0"} {
		if out, err := m.run(ctx, "ip", "-d", "-s", "link", "show", dev); err == nil {
			b.WriteString(out)
		}
	}
	return b.String(), nil
}

// Run runs a command in a member's network namespace (as root), for tests
// that look at a node's devices, routes and rules.
func (m Member) Run(ctx context.Context, bin string, args ...string) (string, error) {
	return m.run(ctx, bin, args...)
}
