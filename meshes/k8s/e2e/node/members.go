package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A cluster of several nodes on one machine, laid out as kind lays out
// its nodes but without containers: each node is a network namespace
// with its own address on a shared underlay, and runs its own containerd
// (root, state and socket of its own), kubelet (under a cgroup root of
// its own) and kube-proxy, all started inside that namespace; the one
// control plane (etcd, the API server, the controller manager, the
// scheduler, CoreDNS, metrics-server and Prometheus) stays in the host's
// namespace, on the host's end of the underlay.
//
// The underlay is a bridge in a namespace of its own (the "switch"), each
// node's uplink and the host's a veth into it: in the host's namespace
// the bridge would put every frame between the nodes through the host's
// iptables and conntrack (bridge-nf-call-iptables is on there for the
// one-node cluster and the lab), which no switch does.

// Member is one node: a kubelet, its containerd and its kube-proxy (and,
// with Flannel, its flanneld).
type Member struct {
	Name string `json:"name"`
	// IP is the node's InternalIP: on the underlay, or (the one node) on lo.
	IP string `json:"ip"`
	// Netns is the node's network namespace (/run/netns/NETNS); empty
	// for the one node, which runs in the host's.
	Netns string `json:"netns,omitempty"`
	// NetnsInode identifies the namespace, to tell that it is gone
	// (no process holds it) after Down.
	NetnsInode uint64 `json:"netns_inode,omitempty"`
	// Uplink is the node's interface on the underlay, in its namespace.
	Uplink string `json:"uplink,omitempty"`
	// CgroupRoot is the kubelet's cgroup root: every pod's cgroup is
	// under /sys/fs/cgroup/CONTROLLER/CGROUPROOT/kubepods.
	CgroupRoot string `json:"cgroup_root"`
}

// The names and addresses of a cluster of several nodes. They are apart
// from the one node's (198.18.64.1, 198.18.65.0/24, 198.18.112.0/20), the
// lab's and the sidecar tests' (198.18.0-5.x, 198.18.100.x, 198.18.210.x,
// 198.19.0.0/16), so that the one-node cluster, a lab and this cluster
// can be up at once.
const (
	// MemberPrefix names the nodes: loadgen-node-1, loadgen-node-2 …
	MemberPrefix = "loadgen-node-"
	// netnsPrefix names the nodes' namespaces: lgnode-1, lgnode-2 … (not
	// the lab's lgPID-… nor its tests' lgtPID…).
	netnsPrefix = "lgnode-"
	// switchNetns holds the underlay's bridge.
	switchNetns = "lgnode-sw"
	// switchBridge is the underlay's bridge, in switchNetns.
	switchBridge = "underlay"
	// HostLink is the host's end of the underlay: the control plane's
	// address is on it.
	HostLink = "lgnode-up"
	// nodeUplink is each node's interface on the underlay, in its namespace.
	nodeUplink = "eth0"
	// MaxNodes bounds the nodes of one cluster (the underlay's addresses
	// .11 to .19).
	MaxNodes = 9
)

// MultiAddresses are a cluster of several nodes': the control plane on
// the host's end of the underlay (198.18.72.1), node i at 198.18.72.1i,
// the pod network (Flannel's Network, each node's /24 of it allocated by
// the controller manager) and the Services' range.
var MultiAddresses = Addresses{
	NodeIP:       "198.18.72.1",
	PodCIDR:      "198.18.80.0/21",
	ServiceCIDR:  "198.18.88.0/21",
	APIServiceIP: "198.18.88.1",
	DNSServiceIP: "198.18.88.10",
	Bridge:       "cni0",
	Underlay:     "198.18.72.0/24",
}

// memberIP is node i's (from 1) address on the underlay.
func memberIP(i int) string { return fmt.Sprintf("198.18.72.%d", 10+i) }

// multiMembers are the nodes of a cluster of n.
func multiMembers(n int) []Member {
	var out []Member
	for i := 1; i <= n; i++ {
		name := MemberPrefix + strconv.Itoa(i)
		out = append(out, Member{Name: name, IP: memberIP(i), Netns: netnsPrefix + strconv.Itoa(i), Uplink: nodeUplink, CgroupRoot: name})
	}
	return out
}

// oneMember is the one node, in the host's namespace.
func oneMember(a Addresses) Member {
	return Member{Name: NodeName, IP: a.NodeIP, CgroupRoot: CgroupRoot}
}

// netnsPath is where a named network namespace is mounted.
func netnsPath(ns string) string { return filepath.Join("/run/netns", ns) }

// inNetns is a command line that runs bin in the member's network
// namespace (and nothing else of it: the mounts, cgroups and /sys stay
// the host's, which containerd and the kubelet need), or bin itself for
// the one node.
func (m Member) inNetns(bin string, args ...string) (string, []string) {
	if m.Netns == "" {
		return bin, args
	}
	return "nsenter", append([]string{"--net=" + netnsPath(m.Netns), "--", bin}, args...)
}

// run runs a command in the member's network namespace.
func (m Member) run(ctx context.Context, bin string, args ...string) (string, error) {
	b, a := m.inNetns(bin, args...)
	return run(ctx, b, a...)
}

// setSysctls sets sysctls (NAME=VALUE) in the member's network
// namespace: /proc/sys/net is the namespace's of the process that opens it.
func (m Member) setSysctls(ctx context.Context, kv ...string) error {
	var script []string
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		script = append(script, fmt.Sprintf("echo %s > %s", v, sysctlPath(k)))
	}
	_, err := m.run(ctx, "sh", "-c", strings.Join(script, " && "))
	return err
}

// underlay is what the state file records of the underlay, for Down.
type underlay struct {
	Switch      string `json:"switch_netns"`
	SwitchInode uint64 `json:"switch_netns_inode,omitempty"`
	HostLink    string `json:"host_link"`
	// Guards are the host's mangle POSTROUTING rules (iptables -A specs).
	Guards []string `json:"guards,omitempty"`
}

// hostGuards keep anything of the cluster from leaving the machine:
// nothing from the underlay's addresses goes anywhere but the underlay,
// and no pod address is ever routed by the host. In mangle POSTROUTING,
// which sees every packet the host sends or forwards and which no
// component of the node rewrites.
func hostGuards(a Addresses) []string {
	return []string{
		"-s " + a.Underlay + " ! -d " + a.Underlay + " -m comment --comment loadgen-node-guard -j DROP",
		"-s " + a.PodCIDR + " -m comment --comment loadgen-node-guard -j DROP",
	}
}

// nodeGuard is each node's: nothing leaves it for an address outside the
// benchmark range (it has no default route anyway).
const nodeGuard = "! -d 198.18.0.0/15 ! -o lo -m comment --comment loadgen-node-guard -j DROP"

func netnsExists(ns string) bool {
	_, err := os.Stat(netnsPath(ns))
	return err == nil
}

func netnsInode(ns string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(netnsPath(ns), &st); err != nil {
		return 0
	}
	return st.Ino
}

// makeUnderlay makes the switch, the host's end of the underlay with the
// control plane's address, and each node's namespace with its uplink, its
// address, a route to nothing but the underlay, its loopback, forwarding
// on and the guard. Each part is recorded before it is made, so that Down
// takes down a half-made underlay too.
func (n *Node) makeUnderlay(ctx context.Context) error {
	a := n.Addr
	for _, ns := range append([]string{switchNetns}, n.netnses()...) {
		if netnsExists(ns) {
			return fmt.Errorf("network namespace %s exists: another cluster of several nodes is up (take it down first: go run ./cmd/node --dir DIR down)", ns)
		}
	}
	if linkExists(HostLink) {
		return fmt.Errorf("link %s exists: another cluster of several nodes is up", HostLink)
	}
	n.st.Underlay = &underlay{Switch: switchNetns, HostLink: HostLink}
	if err := n.st.save(); err != nil {
		return err
	}
	sw := Member{Netns: switchNetns}
	steps := [][]string{
		{"ip", "netns", "add", switchNetns},
		{"ip", "-n", switchNetns, "link", "add", switchBridge, "type", "bridge"},
		{"ip", "-n", switchNetns, "link", "set", switchBridge, "up"},
		{"ip", "-n", switchNetns, "link", "set", "lo", "up"},
		{"ip", "link", "add", HostLink, "type", "veth", "peer", "name", "host", "netns", switchNetns},
		{"ip", "-n", switchNetns, "link", "set", "host", "master", switchBridge, "up"},
		{"ip", "addr", "add", a.NodeIP + "/" + prefixLen(a.Underlay), "dev", HostLink},
		{"ip", "link", "set", HostLink, "up"},
	}
	for _, s := range steps {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			return fmt.Errorf("underlay: %w", err)
		}
	}
	n.st.Underlay.SwitchInode = netnsInode(switchNetns)
	// A switch does not filter: no iptables for the frames it bridges.
	if err := sw.setSysctls(ctx, "net.bridge.bridge-nf-call-iptables=0", "net.bridge.bridge-nf-call-ip6tables=0"); err != nil {
		return fmt.Errorf("underlay: %w", err)
	}
	for _, g := range hostGuards(a) {
		if _, err := run(ctx, "iptables", append([]string{"-w", "-t", "mangle", "-A", "POSTROUTING"}, strings.Fields(g)...)...); err != nil {
			return fmt.Errorf("underlay guard: %w", err)
		}
		n.st.Underlay.Guards = append(n.st.Underlay.Guards, g)
		if err := n.st.save(); err != nil {
			return err
		}
	}
	if err := n.st.save(); err != nil {
		return err
	}
	for i := range n.Members {
		m := &n.Members[i]
		port := "n" + strconv.Itoa(i+1)
		steps := [][]string{
			{"ip", "netns", "add", m.Netns},
			{"ip", "-n", m.Netns, "link", "set", "lo", "up"},
			{"ip", "-n", switchNetns, "link", "add", port, "type", "veth", "peer", "name", m.Uplink, "netns", m.Netns},
			{"ip", "-n", switchNetns, "link", "set", port, "master", switchBridge, "up"},
			{"ip", "-n", m.Netns, "addr", "add", m.IP + "/" + prefixLen(a.Underlay), "dev", m.Uplink},
			{"ip", "-n", m.Netns, "link", "set", m.Uplink, "up"},
		}
		for _, s := range steps {
			if _, err := run(ctx, s[0], s[1:]...); err != nil {
				return fmt.Errorf("node %s: %w", m.Name, err)
			}
		}
		m.NetnsInode = netnsInode(m.Netns)
		// Forwarding, for the pods behind the node; bridge netfilter is
		// on in a new namespace already (kube-proxy's Services between
		// pods on one bridge need it).
		if err := m.setSysctls(ctx, "net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"); err != nil {
			return fmt.Errorf("node %s: %w", m.Name, err)
		}
		if _, err := m.run(ctx, "iptables", append([]string{"-w", "-t", "mangle", "-A", "POSTROUTING"}, strings.Fields(nodeGuard)...)...); err != nil {
			return fmt.Errorf("node %s guard: %w", m.Name, err)
		}
		if err := n.saveMembers(); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) saveMembers() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.st.Members = append([]Member(nil), n.Members...)
	return n.st.save()
}

// netnses are the members' namespaces.
func (n *Node) netnses() []string {
	var out []string
	for _, m := range n.Members {
		if m.Netns != "" {
			out = append(out, m.Netns)
		}
	}
	return out
}

func prefixLen(cidr string) string {
	_, after, ok := strings.Cut(cidr, "/")
	if !ok {
		return "32"
	}
	return after
}

// netnsPids are the processes in a named namespace.
func netnsPids(ns string) []int {
	out, err := run(context.Background(), "ip", "netns", "pids", ns)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// inodeHolders are the processes whose network namespace is inode, the
// namespace ns had. The kernel hands a freed namespace's number to the
// next one made: once ns is gone, a pod the one node starts beside may
// get it. That namespace is pinned somewhere else (containerd mounts each
// pod's under its state directory before any process enters it), so an
// inode mounted at another path than ns's is not ns, and has no holders
// of ns's.
func inodeHolders(inode uint64, ns string) []int {
	if inode == 0 || pinnedElsewhere(inode, netnsPath(ns)) {
		return nil
	}
	want := fmt.Sprintf("net:[%d]", inode)
	var out []int
	for _, pid := range procs() {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && l == want {
			out = append(out, pid)
		}
	}
	return out
}

// pinnedElsewhere tells whether the network namespace numbered inode is
// mounted at a path other than own, as /proc/self/mountinfo's root field
// shows an nsfs mount ("net:[4026532174]").
func pinnedElsewhere(inode uint64, own string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	return mountedElsewhere(string(b), fmt.Sprintf("net:[%d]", inode), own)
}

// mountedElsewhere reads mountinfo for a mount of root at another mount
// point than own.
func mountedElsewhere(mountinfo, root, own string) bool {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[3] == root && f[4] != own {
			return true
		}
	}
	return false
}

// removeUnderlay takes down what makeUnderlay made, whatever of it is
// there: every process still in a node's namespace (ours: nothing else
// runs there), the namespaces (and with them every device, route,
// iptables rule and nft table in them: the vxlan and TUN devices, cni0,
// the pods' veths, kube-proxy's and Flannel's rules), the switch, the
// host's end of the underlay and the guards.
func removeUnderlay(ctx context.Context, st *state) error {
	var errs []error
	for _, m := range st.Members {
		if m.Netns == "" {
			continue
		}
		for range 5 {
			pids := append(netnsPids(m.Netns), inodeHolders(m.NetnsInode, m.Netns)...)
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if netnsExists(m.Netns) {
			if _, err := run(ctx, "ip", "netns", "del", m.Netns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	u := st.Underlay
	if u == nil {
		return errors.Join(errs...)
	}
	if linkExists(u.HostLink) {
		if _, err := run(ctx, "ip", "link", "del", u.HostLink); err != nil {
			errs = append(errs, err)
		}
	}
	if netnsExists(u.Switch) {
		if _, err := run(ctx, "ip", "netns", "del", u.Switch); err != nil {
			errs = append(errs, err)
		}
	}
	for _, g := range u.Guards {
		spec := strings.Fields(g)
		if _, err := run(ctx, "iptables", append([]string{"-w", "-t", "mangle", "-C", "POSTROUTING"}, spec...)...); err == nil {
			if _, err := run(ctx, "iptables", append([]string{"-w", "-t", "mangle", "-D", "POSTROUTING"}, spec...)...); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// underlayLeftovers lists what of the underlay is still there.
func underlayLeftovers(ctx context.Context, st *state) []string {
	var out []string
	for _, m := range st.Members {
		if m.Netns == "" {
			continue
		}
		if netnsExists(m.Netns) {
			out = append(out, "network namespace "+m.Netns)
		}
		for _, pid := range inodeHolders(m.NetnsInode, m.Netns) {
			out = append(out, fmt.Sprintf("process %d in node %s's network namespace (%s)", pid, m.Name, cmdline(pid)))
		}
	}
	u := st.Underlay
	if u == nil {
		return out
	}
	if netnsExists(u.Switch) {
		out = append(out, "network namespace "+u.Switch)
	}
	for _, pid := range inodeHolders(u.SwitchInode, u.Switch) {
		out = append(out, fmt.Sprintf("process %d in the underlay's network namespace (%s)", pid, cmdline(pid)))
	}
	if linkExists(u.HostLink) {
		out = append(out, "link "+u.HostLink)
	}
	for _, g := range u.Guards {
		if _, err := run(ctx, "iptables", append([]string{"-w", "-t", "mangle", "-C", "POSTROUTING"}, strings.Fields(g)...)...); err == nil {
			out = append(out, "iptables -t mangle POSTROUTING "+g)
		}
	}
	return out
}
