package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ServicePort is the TCP port the Service's DNAT rule matches. Servers
// listen on it for every path, so one server in pod2a serves both the
// pod-pod-host-gw and the pod-service path.
const ServicePort = 9000

// Addresses of the lab. They are all in 198.18.0.0/15 (RFC 2544), which
// is reserved for benchmarking and never routed on a real network.
const (
	node1Underlay = "198.18.0.1"
	node2Underlay = "198.18.0.2"
	podm1IP       = "198.18.0.21"
	podm2IP       = "198.18.0.22"
	node1Cni0     = "198.18.1.1"
	pod1aIP       = "198.18.1.10"
	pod1bIP       = "198.18.1.11"
	node2Cni0     = "198.18.2.1"
	pod2aIP       = "198.18.2.10"
	node2Cni1     = "198.18.3.1"
	pod2vIP       = "198.18.3.10"
	node1Vxlan    = "198.18.4.1"
	node2Vxlan    = "198.18.4.2"
	node1Cni1     = "198.18.5.1"
	pod1vIP       = "198.18.5.10"
	clusterIP     = "198.19.0.10"

	underlayMTU = "1500"
	// overlayMTU leaves room for VXLAN's 50 bytes of outer headers, as
	// Flannel and Calico do on a 1500-byte underlay.
	overlayMTU = "1450"
)

// Device names inside the lab's namespaces. They only have to be unique
// per namespace, so fixed names are safe for concurrent labs; all are at
// most 15 bytes (IFNAMSIZ-1).
const (
	underlayDev = "underlay"
	vxlanDev    = "vxlan0"
	podDev      = "eth0"
)

// Short names of the namespaces, in creation order; a lab's names are
// Config.Prefix followed by one of these.
const (
	node1 = "node1"
	node2 = "node2"
	pod1a = "pod1a"
	pod1b = "pod1b"
	pod2a = "pod2a"
	pod1v = "pod1v"
	pod2v = "pod2v"
	podm1 = "podm1"
	podm2 = "podm2"
)

var shortNames = []string{node1, node2, pod1a, pod1b, pod2a, pod1v, pod2v, podm1, podm2}

// maxPrefix keeps namespace names (files in /var/run/netns) short and
// readable in `ip netns list`.
const maxPrefix = 32

// Config configures a lab.
type Config struct {
	// Prefix starts the name of every namespace the lab creates, so that
	// concurrent labs do not collide and Cleanup can find leftovers. Use
	// letters, digits, '-', '_' and '.', starting with a letter or digit.
	// "" means "lg<pid>-" (with a counter added for a second lab in the
	// same process).
	Prefix string
}

// Path is one way from a client namespace to a server: what the CNI
// reports call a path.
type Path struct {
	Name        string // e.g. "pod-pod-vxlan"
	Description string // one line, naming the CNIs that use this path
	ClientNS    string // namespace the load generator dials from
	ServerNS    string // namespace where the server must listen
	ListenAddr  string // IP the server listens on in ServerNS
	DialAddr    string // IP the client dials: a pod IP, a node IP or the Service's ClusterIP
	Baseline    bool   // the loopback path, to compare the others with
}

// Lab is a running lab. Its methods are safe for concurrent use.
type Lab struct {
	prefix     string
	namespaces []string
	paths      []Path

	mu     sync.Mutex
	closed bool
}

// defaultLabs counts labs started with the default prefix in this
// process, so a second one gets a different prefix.
var defaultLabs atomic.Int64

func (c Config) prefix() (string, error) {
	p := c.Prefix
	if p == "" {
		p = fmt.Sprintf("lg%d-", os.Getpid())
		if n := defaultLabs.Add(1) - 1; n > 0 {
			p += fmt.Sprintf("%d-", n)
		}
	}
	if err := validPrefix(p); err != nil {
		return "", err
	}
	return p, nil
}

func validPrefix(p string) error {
	if p == "" {
		return errors.New("lab: empty namespace prefix")
	}
	if len(p) > maxPrefix {
		return fmt.Errorf("lab: namespace prefix %q is longer than %d bytes: use a shorter Config.Prefix", p, maxPrefix)
	}
	for i, r := range p {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		// A leading '-' would make `ip` read the name as an option.
		if !alnum && (i == 0 || r != '-' && r != '_' && r != '.') {
			return fmt.Errorf("lab: namespace prefix %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", p)
		}
	}
	return nil
}

// NetnsFile is the file that pins the named namespace, as `ip netns`
// creates it. Open it and pass the descriptor to setns(2) with
// CLONE_NEWNET to enter the namespace.
func NetnsFile(ns string) string { return "/var/run/netns/" + ns }

// Start builds a lab: nine namespaces, wired as the package
// documentation shows. If any step fails it removes what it created and
// returns an error naming the failing command. ctx bounds the setup only;
// the lab lives until Close.
func Start(ctx context.Context, cfg Config) (*Lab, error) {
	// Only the cheap checks: a failing `ip` command below names itself,
	// and Available's probe namespace would slow every Start down.
	if err := tools(); err != nil {
		return nil, err
	}
	prefix, err := cfg.prefix()
	if err != nil {
		return nil, err
	}
	l := &Lab{prefix: prefix}
	if err := l.build(ctx); err != nil {
		// Clean up without ctx: it may be the reason we failed.
		if cerr := l.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	l.paths = l.makePaths()
	return l, nil
}

// ns is the full name of a namespace of this lab.
func (l *Lab) ns(short string) string { return l.prefix + short }

func (l *Lab) build(ctx context.Context) error {
	b := &builder{ctx: ctx}

	for _, short := range shortNames {
		ns := l.ns(short)
		// Refuse a name someone else holds before trying, so that a
		// namespace present after a failed (say, cancelled) `ip netns add`
		// can only be ours and is removed with the rest.
		if _, err := os.Stat(NetnsFile(ns)); err == nil {
			return fmt.Errorf("lab: namespace %s already exists: a leftover lab? remove it with lab.Cleanup(%q) or `ip netns del %s`", ns, l.prefix, ns)
		}
		if _, err := run(ctx, "ip", "netns", "add", ns); err != nil {
			if _, serr := os.Stat(NetnsFile(ns)); serr == nil {
				l.namespaces = append(l.namespaces, ns)
			}
			return err
		}
		// Remember it at once, so Close removes it even if the next
		// command fails.
		l.namespaces = append(l.namespaces, ns)
		b.ip(ns, "link", "set", "lo", "up")
		// -e: a kernel without IPv6 simply has nothing to turn off.
		b.exec(ns, "sysctl", "-q", "-e", "-w",
			"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
		if b.err != nil {
			return b.err
		}
	}
	n1, n2 := l.ns(node1), l.ns(node2)

	// The underlay: the "physical" link between the two nodes.
	b.ip(n1, "link", "add", "name", underlayDev, "type", "veth", "peer", "name", underlayDev, "netns", n2)
	for _, n := range []struct{ ns, addr string }{{n1, node1Underlay}, {n2, node2Underlay}} {
		b.ip(n.ns, "link", "set", underlayDev, "mtu", underlayMTU, "up")
		b.ip(n.ns, "addr", "add", n.addr+"/24", "dev", underlayDev)
		b.exec(n.ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
	}

	// Bridged pods (what Flannel's and Calico's host-local IPAM plus the
	// bridge plugin give you).
	l.bridge(b, n1, "cni0", node1Cni0, underlayMTU)
	l.pod(b, pod1a, n1, "cni0", pod1aIP, node1Cni0, underlayMTU)
	l.pod(b, pod1b, n1, "cni0", pod1bIP, node1Cni0, underlayMTU)
	l.bridge(b, n2, "cni0", node2Cni0, underlayMTU)
	l.pod(b, pod2a, n2, "cni0", pod2aIP, node2Cni0, underlayMTU)

	// host-gw: each node routes the other's pod subnet to the other
	// node's underlay address, no encapsulation.
	b.ip(n1, "route", "add", "198.18.2.0/24", "via", node2Underlay, "dev", underlayDev)
	b.ip(n2, "route", "add", "198.18.1.0/24", "via", node1Underlay, "dev", underlayDev)

	// VXLAN overlay, unicast to the other node, like Flannel's vxlan
	// backend (which fills the FDB per peer; with two nodes a fixed
	// remote is the same thing).
	for _, n := range []struct{ ns, local, remote, addr string }{
		{n1, node1Underlay, node2Underlay, node1Vxlan},
		{n2, node2Underlay, node1Underlay, node2Vxlan},
	} {
		b.ip(n.ns, "link", "add", "name", vxlanDev, "type", "vxlan", "id", "1", "dstport", "4789",
			"local", n.local, "remote", n.remote, "dev", underlayDev)
		b.ip(n.ns, "link", "set", vxlanDev, "mtu", overlayMTU, "up")
		b.ip(n.ns, "addr", "add", n.addr+"/24", "dev", vxlanDev)
	}
	// The overlay pods get their own subnets, routed through vxlan0 in
	// both directions, so neither requests nor replies can take the
	// host-gw routes above.
	l.bridge(b, n1, "cni1", node1Cni1, overlayMTU)
	l.pod(b, pod1v, n1, "cni1", pod1vIP, node1Cni1, overlayMTU)
	l.bridge(b, n2, "cni1", node2Cni1, overlayMTU)
	l.pod(b, pod2v, n2, "cni1", pod2vIP, node2Cni1, overlayMTU)
	b.ip(n1, "route", "add", "198.18.3.0/24", "via", node2Vxlan, "dev", vxlanDev)
	b.ip(n2, "route", "add", "198.18.5.0/24", "via", node1Vxlan, "dev", vxlanDev)

	// Macvlan pods: a child of each node's underlay end, created in the
	// node (where the parent is) and born in the pod's namespace, so it
	// never exists anywhere else. Frames leave through one veth end and
	// arrive at the other, where the peer macvlan picks them up by MAC.
	for _, m := range []struct{ node, pod, addr string }{
		{n1, l.ns(podm1), podm1IP},
		{n2, l.ns(podm2), podm2IP},
	} {
		b.ip(m.node, "link", "add", "link", underlayDev, "name", podDev, "netns", m.pod,
			"type", "macvlan", "mode", "bridge")
		b.ip(m.pod, "link", "set", podDev, "mtu", underlayMTU, "up")
		b.ip(m.pod, "addr", "add", m.addr+"/24", "dev", podDev)
	}

	// The Service: kube-proxy's iptables mode DNATs a ClusterIP in
	// PREROUTING on the client's node. The endpoint is on the other node,
	// so the reply comes back through node1, where conntrack reverses the
	// DNAT; no SNAT is needed. -w: wait for the xtables lock rather than
	// fail when another iptables runs.
	b.exec(n1, "iptables", "-w", "-t", "nat", "-A", "PREROUTING",
		"-d", clusterIP+"/32", "-p", "tcp", "--dport", fmt.Sprint(ServicePort),
		"-j", "DNAT", "--to-destination", fmt.Sprintf("%s:%d", pod2aIP, ServicePort))

	return b.err
}

// bridge adds a bridge with the pods' gateway address to a node.
func (l *Lab) bridge(b *builder, node, name, gw, mtu string) {
	b.ip(node, "link", "add", "name", name, "type", "bridge")
	// Setting the MTU explicitly keeps the bridge from taking whatever
	// its first port has.
	b.ip(node, "link", "set", name, "mtu", mtu, "up")
	b.ip(node, "addr", "add", gw+"/24", "dev", name)
}

// pod creates a pod's veth: eth0 in the pod, "veth-<pod>" in the node,
// enslaved to the node's bridge; and the pod's default route.
func (l *Lab) pod(b *builder, short, node, bridge, addr, gw, mtu string) {
	ns := l.ns(short)
	host := "veth-" + short // ≤ 15 bytes: short names are 5
	b.ip(ns, "link", "add", "name", podDev, "type", "veth", "peer", "name", host, "netns", node)
	b.ip(ns, "link", "set", podDev, "mtu", mtu, "up")
	b.ip(ns, "addr", "add", addr+"/24", "dev", podDev)
	b.ip(ns, "route", "add", "default", "via", gw)
	b.ip(node, "link", "set", host, "mtu", mtu, "master", bridge, "up")
}

// PathNames are the names of the lab's paths, in order, without building
// it: for checking a command line first.
func PathNames() []string {
	var names []string
	for _, p := range (&Lab{}).makePaths() {
		names = append(names, p.Name)
	}
	return names
}

func (l *Lab) makePaths() []Path {
	return []Path{
		{
			Name:        "loopback",
			Description: "client and server in one pod over loopback: the baseline without any CNI",
			ClientNS:    l.ns(pod1a), ServerNS: l.ns(pod1a),
			ListenAddr: "127.0.0.1", DialAddr: "127.0.0.1",
			Baseline: true,
		},
		{
			Name:        "node-node",
			Description: "node → node over the underlay link: the hosts' own network",
			ClientNS:    l.ns(node1), ServerNS: l.ns(node2),
			ListenAddr: node2Underlay, DialAddr: node2Underlay,
		},
		{
			Name:        "pod-own-node",
			Description: "pod → its own node through the pod's veth and the node's bridge (hostNetwork server)",
			ClientNS:    l.ns(pod1a), ServerNS: l.ns(node1),
			ListenAddr: node1Cni0, DialAddr: node1Cni0,
		},
		{
			Name:        "pod-pod-same-node",
			Description: "pod → pod on the same node through the node's bridge (Flannel, Calico/bridge)",
			ClientNS:    l.ns(pod1a), ServerNS: l.ns(pod1b),
			ListenAddr: pod1bIP, DialAddr: pod1bIP,
		},
		{
			Name:        "pod-pod-host-gw",
			Description: "pod → pod on another node, routed over the underlay without encapsulation (Flannel host-gw, Calico BGP)",
			ClientNS:    l.ns(pod1a), ServerNS: l.ns(pod2a),
			ListenAddr: pod2aIP, DialAddr: pod2aIP,
		},
		{
			Name:        "pod-pod-vxlan",
			Description: "pod → pod on another node, VXLAN overlay (Flannel vxlan, Calico VXLAN, Cilium tunnel)",
			ClientNS:    l.ns(pod1v), ServerNS: l.ns(pod2v),
			ListenAddr: pod2vIP, DialAddr: pod2vIP,
		},
		{
			Name:        "pod-pod-macvlan",
			Description: "pod → pod on another node, macvlan bridge mode on each node's uplink (Macvlan CNI)",
			ClientNS:    l.ns(podm1), ServerNS: l.ns(podm2),
			ListenAddr: podm2IP, DialAddr: podm2IP,
		},
		{
			Name:        "pod-service",
			Description: "pod → Service ClusterIP, DNAT by kube-proxy-style iptables rules to a pod on another node",
			ClientNS:    l.ns(pod1a), ServerNS: l.ns(pod2a),
			ListenAddr: pod2aIP, DialAddr: clusterIP,
		},
	}
}

// Paths returns the lab's paths in the order of the CNI reports:
// loopback, node-node, pod-own-node, pod-pod-same-node, pod-pod-host-gw,
// pod-pod-vxlan, pod-pod-macvlan, pod-service.
func (l *Lab) Paths() []Path { return append([]Path(nil), l.paths...) }

// Namespaces returns the names of the lab's namespaces, nodes first.
func (l *Lab) Namespaces() []string { return append([]string(nil), l.namespaces...) }

// Command returns `ip netns exec ns name args...`: a command that runs
// inside one of the lab's namespaces. `ip netns exec` execs name, so the
// command's process is name itself.
func (l *Lab) Command(ctx context.Context, ns string, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
}

// Close removes every namespace of the lab, and with them every device
// and route in them. Processes still running inside a namespace keep it
// alive, nameless, until they exit, so stop servers first. Close is
// idempotent: later calls return nil.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	// Pods first: deleting a pod deletes its veth's node end too.
	for i := len(l.namespaces) - 1; i >= 0; i-- {
		if err := deleteNS(ctx, l.namespaces[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteNS(ctx context.Context, ns string) error {
	_, err := run(ctx, "ip", "netns", "del", ns)
	if err != nil {
		if _, serr := os.Stat(NetnsFile(ns)); errors.Is(serr, os.ErrNotExist) {
			return nil // already gone: that is what we wanted
		}
	}
	return err
}

// Cleanup deletes every namespace whose name starts with prefix: the
// leftovers of a lab whose process crashed before Close. Pass the
// Config.Prefix it used (or "lg<pid>-" for the default). An empty prefix
// is refused, since it would delete every namespace on the machine.
func Cleanup(prefix string) error {
	if err := validPrefix(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := listNS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range names {
		if strings.HasPrefix(ns, prefix) {
			if err := deleteNS(ctx, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// listNS returns the names `ip netns list` knows.
func listNS(ctx context.Context) ([]string, error) {
	out, err := run(ctx, "ip", "netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// Lines are "name" or "name (id: 3)".
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// probes counts Available's throwaway namespaces, so concurrent calls
// do not collide.
var probes atomic.Int64

// Available reports why the lab cannot run here (not Linux, not root, no
// `ip`, `iptables` or `sysctl`, or a kernel that refuses a network
// namespace, veth, bridge, vxlan, macvlan or the iptables nat table) as
// an error that says what to do; nil when it can. It creates and deletes
// a throwaway namespace to find out.
func Available() error {
	if err := tools(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := fmt.Sprintf("lgprobe%d-%d", os.Getpid(), probes.Add(1))
	if _, err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return withHint(err, "the kernel or container refuses network namespaces: run privileged (docker --privileged) with CONFIG_NET_NS")
	}
	defer deleteNS(ctx, ns)

	for _, p := range []struct {
		args []string
		hint string
	}{
		{[]string{"-n", ns, "link", "set", "lo", "up"}, "cannot configure a network namespace"},
		{[]string{"-n", ns, "link", "add", "name", "pa", "type", "veth", "peer", "name", "pb"}, "enable veth: modprobe veth"},
		{[]string{"-n", ns, "link", "add", "name", "pbr", "type", "bridge"}, "enable bridges: modprobe bridge"},
		{[]string{"-n", ns, "link", "add", "name", "pvx", "type", "vxlan", "id", "1", "dstport", "4789", "local", node1Underlay, "dev", "pa"}, "enable VXLAN: modprobe vxlan"},
		{[]string{"-n", ns, "link", "add", "link", "pa", "name", "pmv", "type", "macvlan", "mode", "bridge"}, "enable macvlan: modprobe macvlan"},
		{[]string{"netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"}, "sysctl cannot write inside a network namespace: run privileged"},
		{[]string{"netns", "exec", ns, "iptables", "-w", "-t", "nat", "-L", "PREROUTING", "-n"}, "enable the iptables nat table: modprobe iptable_nat (or nft_chain_nat for iptables-nft)"},
	} {
		if _, err := run(ctx, "ip", p.args...); err != nil {
			return withHint(err, p.hint)
		}
	}
	return nil
}

// tools checks the operating system, privileges and commands the lab
// needs, without touching the kernel.
func tools() error {
	if runtime.GOOS != "linux" {
		return errors.New("lab: network namespaces need Linux; run on a Linux host or VM")
	}
	if os.Geteuid() != 0 {
		return errors.New("lab: creating network namespaces needs root: run as root (e.g. sudo -E go test ./meshes/lab)")
	}
	for _, tool := range []struct{ name, pkg string }{
		{"ip", "iproute2"}, {"iptables", "iptables"}, {"sysctl", "procps"},
	} {
		if _, err := exec.LookPath(tool.name); err != nil {
			return fmt.Errorf("lab: %s not found on PATH: install it (apt-get install %s)", tool.name, tool.pkg)
		}
	}
	return nil
}

// staleRE matches the default prefix's namespaces: lg<pid>-… .
var staleRE = regexp.MustCompile(`^lg([0-9]+)-`)

// CleanupStale deletes the namespaces of default-prefixed labs whose
// process is gone (killed before Close could run), and returns their
// names. Labs of running processes are left alone.
func CleanupStale() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := listNS(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, ns := range names {
		m := staleRE.FindStringSubmatch(ns)
		if m == nil {
			continue
		}
		if _, err := os.Stat("/proc/" + m[1]); err == nil {
			continue // its process still runs
		}
		if err := deleteNS(ctx, ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ns)
	}
	return removed, errors.Join(errs...)
}
