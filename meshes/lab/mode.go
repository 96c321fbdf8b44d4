package lab

import (
	"fmt"
	"strings"
)

// Mode is a CNI datapath: the kernel mechanism a real CNI uses to carry
// pod traffic, which a lab builds between its two nodes.
type Mode string

// The modes, each the mechanism of real CNIs.
const (
	// HostGW routes each pod's /32 on its node and the other node's pod
	// subnet over the underlay, no bridge and no encapsulation (Calico
	// without encapsulation, Flannel host-gw's routes).
	HostGW Mode = "host-gw"
	// VXLAN bridges pods on cni0 and carries the other node's pod subnet in
	// a VXLAN overlay (Flannel vxlan, Calico VXLAN, Cilium tunnel).
	VXLAN Mode = "vxlan"
	// Bridge puts pods on a Linux bridge and routes the other node's subnet
	// over the underlay (kubenet's cbr0 with cloud routes, Weave-like).
	Bridge Mode = "bridge"
	// Macvlan gives each pod a macvlan child of its node's uplink (the
	// Macvlan CNI): pods are on the underlay's own subnet, and neither the
	// node nor kube-proxy sees their packets.
	Macvlan Mode = "macvlan"
	// EBPF routes like HostGW, but tc programs on the pods' veths and the
	// uplink move pod packets with bpf_redirect_peer and
	// bpf_redirect_neigh, past the nodes' IP stack and iptables (Cilium's
	// native-routing datapath).
	EBPF Mode = "ebpf"
	// UDP bridges pods on cni0 and routes the other node's subnet into a TUN
	// device, where a user-space process carries each packet in a UDP
	// datagram to the other node (Flannel's old udp backend).
	UDP Mode = "udp"
	// IPIP routes like HostGW through an IP-in-IP tunnel (Calico IPIP).
	IPIP Mode = "ipip"
	// Geneve bridges pods on cni0 over a Geneve overlay (OVN-Kubernetes,
	// Antrea).
	Geneve Mode = "geneve"
)

// modes are the modes in report order.
var modes = []struct {
	mode Mode
	desc string
}{
	{HostGW, "routes per pod, no bridge, no encapsulation (Calico, Flannel host-gw)"},
	{VXLAN, "cni0 bridge + VXLAN overlay (Flannel vxlan, Calico VXLAN, Cilium tunnel)"},
	{Bridge, "cni0 bridge + routes over the underlay (kubenet, Weave-like)"},
	{Macvlan, "macvlan children of the uplink (Macvlan CNI): no Service, no pod→own node"},
	{EBPF, "routed veths with tc bpf_redirect_peer/bpf_redirect_neigh past iptables (Cilium)"},
	{UDP, "cni0 bridge + TUN and a user-space UDP tunnel (Flannel udp)"},
	{IPIP, "routes per pod + IP-in-IP tunnel (Calico IPIP)"},
	{Geneve, "cni0 bridge + Geneve overlay (OVN-Kubernetes, Antrea)"},
}

// Modes returns every mode, in report order.
func Modes() []Mode {
	out := make([]Mode, len(modes))
	for i, m := range modes {
		out[i] = m.mode
	}
	return out
}

// Description says in one line what the mode builds and which CNIs use it.
func (m Mode) Description() string {
	for _, x := range modes {
		if x.mode == m {
			return x.desc
		}
	}
	return ""
}

// Valid tells whether m is one of Modes.
func (m Mode) Valid() bool { return m.Description() != "" }

// ParseModes reads a comma-separated list of modes ("host-gw,vxlan"); an
// empty list is every mode. A mode named twice is an error, as is an
// unknown one.
func ParseModes(s string) ([]Mode, error) {
	var out []Mode
	seen := map[Mode]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		m := Mode(part)
		if !m.Valid() {
			return nil, fmt.Errorf("no CNI mode %q: the lab has %s", part, strings.Join(modeNames(), ", "))
		}
		if seen[m] {
			return nil, fmt.Errorf("CNI mode %q given twice", part)
		}
		seen[m] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return Modes(), nil
	}
	return out, nil
}

func modeNames() []string {
	var names []string
	for _, m := range modes {
		names = append(names, string(m.mode))
	}
	return names
}

// family is how a mode joins pods to their node.
type family int

const (
	routed     family = iota // a veth per pod, a /32 route on the node
	bridged                  // a veth per pod on the node's cni0 bridge
	macvlanned               // a macvlan child of the node's uplink per pod
)

func (m Mode) family() family {
	switch m {
	case HostGW, EBPF, IPIP:
		return routed
	case Macvlan:
		return macvlanned
	}
	return bridged
}

// mtu is the pods' MTU: the underlay's less what the mode's encapsulation
// adds, as the CNIs configure it on a 1500-byte underlay.
func (m Mode) mtu() int {
	switch m {
	case VXLAN, Geneve:
		return 1450
	case UDP:
		return 1472 // Flannel udp: 20 bytes IP + 8 bytes UDP
	case IPIP:
		return 1480
	}
	return 1500
}

// serviceBy says what implements the mode's Services, "" when the CNI has
// none (macvlan pods bypass kube-proxy).
func (m Mode) serviceBy() string {
	if m == Macvlan {
		return ""
	}
	return "iptables"
}
