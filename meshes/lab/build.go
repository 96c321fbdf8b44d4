package lab

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// pod is one pod of the lab: its namespace, its node, and, for routed and
// bridged modes, the MACs of its veth's two ends (fixed, so the ebpf
// programs can write them into frames they redirect).
type pod struct {
	short, node string
	ip          string
	podMAC      string // eth0 in the pod
	hostMAC     string // veth-<pod> in the node
}

func (l *Lab) pods() []pod {
	a := l.addrs()
	return []pod{
		{pod1a, node1, a.pod1a, "02:4c:47:00:1a:01", "02:4c:47:00:1a:02"},
		{pod1b, node1, a.pod1b, "02:4c:47:00:1b:01", "02:4c:47:00:1b:02"},
		{pod2a, node2, a.pod2a, "02:4c:47:00:2a:01", "02:4c:47:00:2a:02"},
	}
}

// hostVeth is the node's end of a pod's veth (≤ 15 bytes: short names are 5).
func hostVeth(short string) string { return "veth-" + short }

// node describes one node for the mode builders.
type nodeSide struct {
	short          string
	ip, peerIP     string // underlay addresses
	net, peerNet   string // pod subnets
	gw             string // cni0's address (bridged modes)
	tunIP, peerTun string // overlay addresses (vxlan0, geneve0)
}

var nodeSides = []nodeSide{
	{node1, node1IP, node2IP, node1Net, node2Net, node1GW, node1Tun, node2Tun},
	{node2, node2IP, node1IP, node2Net, node1Net, node2GW, node2Tun, node1Tun},
}

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
	for _, n := range nodeSides {
		ns := l.ns(n.short)
		b.ip(ns, "link", "set", underlayDev, "mtu", strconv.Itoa(underlayMTU), "up")
		b.ip(ns, "addr", "add", n.ip+"/24", "dev", underlayDev)
		b.exec(ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
	}

	switch l.mode.family() {
	case routed:
		l.routedPods(b)
	case bridged:
		l.bridgedPods(b)
	case macvlanned:
		l.macvlanPods(b)
	}
	if b.err != nil {
		return b.err
	}
	if err := l.crossNode(ctx, b); err != nil {
		return err
	}
	if l.cfg.needsServices() {
		l.services(b, n1)
	}
	if b.err != nil {
		return b.err
	}
	if l.mode == EBPF {
		st, err := attachPrograms(l)
		l.bpf = st // whatever was attached is detached by Close
		if err != nil {
			return err
		}
	}
	return nil
}

// routedPods gives each pod a veth with a /32 address and a default route
// to its node's underlay address (the pod ARPs for it; the node answers for
// its own address on any device), and the node a /32 route to the pod, as
// Calico does.
func (l *Lab) routedPods(b *builder) {
	mtu := strconv.Itoa(l.mode.mtu())
	for _, p := range l.pods() {
		ns, node := l.ns(p.short), l.ns(p.node)
		nodeIP := node1IP
		if p.node == node2 {
			nodeIP = node2IP
		}
		b.ip(ns, "link", "add", "name", podDev, "address", p.podMAC, "type", "veth",
			"peer", "name", hostVeth(p.short), "address", p.hostMAC, "netns", node)
		b.ip(ns, "link", "set", podDev, "mtu", mtu, "up")
		b.ip(ns, "addr", "add", p.ip+"/32", "dev", podDev)
		b.ip(ns, "route", "add", "default", "via", nodeIP, "dev", podDev, "onlink")
		b.ip(node, "link", "set", hostVeth(p.short), "mtu", mtu, "up")
		b.ip(node, "route", "add", p.ip+"/32", "dev", hostVeth(p.short))
	}
}

// bridgedPods puts each node's pods on its cni0 bridge, the bridge
// plugin's layout (Flannel, kubenet). br_netfilter is on, as kube-proxy
// requires, so that bridged replies pass conntrack.
func (l *Lab) bridgedPods(b *builder) {
	mtu := strconv.Itoa(l.mode.mtu())
	for _, n := range nodeSides {
		ns := l.ns(n.short)
		b.ip(ns, "link", "add", "name", bridgeDev, "type", "bridge")
		// Setting the MTU explicitly keeps the bridge from taking whatever
		// its first port has.
		b.ip(ns, "link", "set", bridgeDev, "mtu", mtu, "up")
		b.ip(ns, "addr", "add", n.gw+"/24", "dev", bridgeDev)
		b.exec(ns, "sysctl", "-q", "-e", "-w", "net.bridge.bridge-nf-call-iptables=1")
	}
	for _, p := range l.pods() {
		ns, node := l.ns(p.short), l.ns(p.node)
		gw := node1GW
		if p.node == node2 {
			gw = node2GW
		}
		b.ip(ns, "link", "add", "name", podDev, "address", p.podMAC, "type", "veth",
			"peer", "name", hostVeth(p.short), "address", p.hostMAC, "netns", node)
		b.ip(ns, "link", "set", podDev, "mtu", mtu, "up")
		b.ip(ns, "addr", "add", p.ip+"/24", "dev", podDev)
		b.ip(ns, "route", "add", "default", "via", gw)
		b.ip(node, "link", "set", hostVeth(p.short), "mtu", mtu, "master", bridgeDev, "up")
	}
}

// macvlanPods gives each pod a macvlan child of its node's uplink, created
// in the node (where the parent is) and born in the pod's namespace, so it
// never exists anywhere else. Frames leave through one veth end and arrive
// at the other, where the peer macvlan picks them up by MAC.
func (l *Lab) macvlanPods(b *builder) {
	for _, p := range l.pods() {
		ns, node := l.ns(p.short), l.ns(p.node)
		b.ip(node, "link", "add", "link", underlayDev, "name", podDev, "netns", ns, "type", "macvlan", "mode", "bridge")
		b.ip(ns, "link", "set", podDev, "mtu", strconv.Itoa(underlayMTU), "up")
		b.ip(ns, "addr", "add", p.ip+"/24", "dev", podDev)
	}
}

// crossNode makes each node reach the other's pod subnet the mode's way.
func (l *Lab) crossNode(ctx context.Context, b *builder) error {
	for _, n := range nodeSides {
		ns := l.ns(n.short)
		switch l.mode {
		case HostGW, EBPF, Bridge:
			b.ip(ns, "route", "add", n.peerNet, "via", n.peerIP, "dev", underlayDev)
		case VXLAN:
			// Unicast to the other node, like Flannel's vxlan backend (which
			// fills the FDB per peer; with two nodes a fixed remote is the
			// same thing). The pod subnets are routed through vxlan0 both
			// ways, so neither requests nor replies take the underlay.
			b.ip(ns, "link", "add", "name", vxlanDev, "type", "vxlan", "id", "1", "dstport", "4789",
				"local", n.ip, "remote", n.peerIP, "dev", underlayDev)
			l.overlay(b, ns, vxlanDev, n)
		case Geneve:
			b.ip(ns, "link", "add", "name", geneveDev, "type", "geneve", "id", "1", "remote", n.peerIP)
			l.overlay(b, ns, geneveDev, n)
		case IPIP:
			b.ip(ns, "link", "add", "name", ipipDev, "type", "ipip", "local", n.ip, "remote", n.peerIP, "dev", underlayDev)
			b.ip(ns, "link", "set", ipipDev, "mtu", strconv.Itoa(l.mode.mtu()), "up")
			b.ip(ns, "route", "add", n.peerNet, "dev", ipipDev, "src", n.ip)
		case UDP:
			// Flannel udp: the other node's subnet goes into flannel0, a TUN
			// device whose packets flanneld reads and sends as UDP datagrams.
			b.ip(ns, "tuntap", "add", "dev", tunDev, "mode", "tun")
			b.ip(ns, "link", "set", tunDev, "mtu", strconv.Itoa(l.mode.mtu()), "up")
			b.ip(ns, "route", "add", n.peerNet, "dev", tunDev, "src", n.gw)
		}
	}
	if b.err != nil || l.mode != UDP {
		return b.err
	}
	for _, n := range nodeSides {
		tc := TunnelConfig{Dev: tunDev, Listen: hostPort(n.ip, TunnelPort),
			Routes: []TunnelRoute{{Prefix: n.peerNet, Peer: hostPort(n.peerIP, TunnelPort)}}}
		cmd, err := startTunnel(ctx, l, l.ns(n.short), tc)
		if err != nil {
			return err
		}
		l.tunnels = append(l.tunnels, cmd)
	}
	return nil
}

// overlay addresses an L2 overlay device and routes the other node's pod
// subnet through it.
func (l *Lab) overlay(b *builder, ns, dev string, n nodeSide) {
	b.ip(ns, "link", "set", dev, "mtu", strconv.Itoa(l.mode.mtu()), "up")
	b.ip(ns, "addr", "add", n.tunIP+"/24", "dev", dev)
	b.ip(ns, "route", "add", n.peerNet, "via", n.peerTun, "dev", dev)
}

// services installs kube-proxy's iptables mode on the client node: nat
// PREROUTING (pod traffic) and OUTPUT (the node's own) jump to
// KUBE-SERVICES, which DNATs each ClusterIP to its one endpoint; conntrack
// undoes it on the way back. The node routes the Service range to its
// uplink, as its default route would, so that its own connections reach
// OUTPUT. -w: wait for the xtables lock rather than fail when another
// iptables runs.
func (l *Lab) services(b *builder, ns string) {
	a := l.addrs()
	b.ip(ns, "route", "add", serviceNet, "dev", underlayDev)
	b.exec(ns, "iptables", "-w", "-t", "nat", "-N", "KUBE-SERVICES")
	b.exec(ns, "iptables", "-w", "-t", "nat", "-A", "PREROUTING", "-j", "KUBE-SERVICES")
	b.exec(ns, "iptables", "-w", "-t", "nat", "-A", "OUTPUT", "-j", "KUBE-SERVICES")
	for _, s := range []struct{ ip, endpoint string }{{svcLocalIP, a.pod1b}, {svcRemoteIP, a.pod2a}} {
		for _, proto := range []string{"tcp", "udp"} { // a Service port of each protocol, as UDP's
			b.exec(ns, "iptables", "-w", "-t", "nat", "-A", "KUBE-SERVICES",
				"-d", s.ip+"/32", "-p", proto, "--dport", strconv.Itoa(ServicePort),
				"-j", "DNAT", "--to-destination", hostPort(s.endpoint, TargetPort))
		}
	}
}
