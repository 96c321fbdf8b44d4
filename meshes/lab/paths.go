package lab

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ServicePort is the TCP port servers listen on for the direct paths and
// the port of the Services' ClusterIPs.
const ServicePort = 9000

// TargetPort is the port the Services' endpoints listen on: a Service's
// port 9000 is DNATed to the endpoint's 9001, as a Service's port and
// targetPort differ in Kubernetes. Keeping the endpoints' port apart lets
// the ebpf mode's programs tell a Service's replies (which must go back
// through the node's conntrack) from a direct path's.
const TargetPort = 9001

// The lab's paths, in the CNI report's order; the loopback baseline first.
const (
	Loopback          = "loopback"
	NodeNode          = "node-node"
	PodOwnNode        = "pod-own-node"
	PodOtherNode      = "pod-other-node"
	PodPodSameNode    = "pod-pod-same-node"
	PodPodOtherNode   = "pod-pod-other-node"
	NodeServiceLocal  = "node-service-local"
	NodeServiceRemote = "node-service-remote"
	PodServiceLocal   = "pod-service-local"
	PodServiceRemote  = "pod-service-remote"
)

// Path is one way from a client namespace to a server in one mode: what
// the CNI reports call a path.
type Path struct {
	Name        string // e.g. "pod-pod-other-node"
	Mode        Mode
	Description string // one line: what carries the packets in this mode
	ClientNS    string // namespace the load generator dials from
	ServerNS    string // namespace where the server must listen
	Listen      string // host:port the server listens on in ServerNS
	Dial        string // host:port the client dials: a pod, a node or a ClusterIP
	Baseline    bool   // the loopback path, to compare the others with
	Service     bool   // reached through a Service's ClusterIP
	// NotApplicable says why the mode has no such path (a macvlan pod never
	// reaches a Service); the other fields but Name and Mode are empty then.
	NotApplicable string
}

// PathNames are the names of every lab's paths, in order: the loopback
// baseline, then the nine paths of the CNI report.
func PathNames() []string {
	return []string{Loopback, NodeNode, PodOwnNode, PodOtherNode, PodPodSameNode, PodPodOtherNode,
		NodeServiceLocal, NodeServiceRemote, PodServiceLocal, PodServiceRemote}
}

// ParsePaths reads a comma-separated list of PathNames (loadgen lab's
// --paths); an empty list is none, which is every path. Its errors name
// the flag.
func ParsePaths(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !slices.Contains(PathNames(), name) {
			return nil, fmt.Errorf("--paths: no path %q: the lab has %s", name, strings.Join(PathNames(), ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

// IsServicePath tells whether the path named name goes through a Service
// (and so, in most modes, through iptables).
func IsServicePath(name string) bool {
	switch name {
	case NodeServiceLocal, NodeServiceRemote, PodServiceLocal, PodServiceRemote:
		return true
	}
	return false
}

func hostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// cross says how the mode carries pod traffic to the other node.
func (m Mode) cross() string {
	switch m {
	case HostGW:
		return "routed over the underlay, no encapsulation"
	case VXLAN:
		return "VXLAN-encapsulated on vxlan0"
	case Bridge:
		return "routed over the underlay from the bridge"
	case Macvlan:
		return "macvlan frames on the uplink"
	case EBPF:
		return "bpf_redirect_neigh to the uplink, bpf_redirect_peer into the pod"
	case UDP:
		return "through flannel0 (TUN) and the user-space UDP tunnel"
	case IPIP:
		return "IP-in-IP on ipip0"
	case Geneve:
		return "Geneve-encapsulated on geneve0"
	}
	return ""
}

// local says how the mode joins a pod to its node.
func (m Mode) local() string {
	switch m.family() {
	case bridged:
		return "the pod's veth and the node's cni0 bridge"
	case macvlanned:
		return "macvlan children of one uplink (bridge mode)"
	}
	if m == EBPF {
		return "veth to veth by bpf_redirect_peer, past the node's stack"
	}
	return "the pod's veth and a /32 route on the node"
}

// makePaths lists the lab's paths for its mode.
func (l *Lab) makePaths() []Path {
	m := l.mode
	a := l.addrs()
	n1, n2 := l.ns(node1), l.ns(node2)
	p1a, p1b, p2a := l.ns(pod1a), l.ns(pod1b), l.ns(pod2a)
	any := func(port int) string { return hostPort("0.0.0.0", port) }
	svc := "kube-proxy-style iptables DNAT on node1"
	if m == EBPF {
		svc += " (the tc programs hand Service traffic to the stack)"
	}
	paths := []Path{
		{Name: Loopback, Description: "client and server in one pod over loopback: the baseline without any CNI",
			ClientNS: p1a, ServerNS: p1a, Listen: hostPort("127.0.0.1", ServicePort), Dial: hostPort("127.0.0.1", ServicePort), Baseline: true},
		{Name: NodeNode, Description: "node → node over the underlay link: the hosts' own network",
			ClientNS: n1, ServerNS: n2, Listen: any(ServicePort), Dial: hostPort(node2IP, ServicePort)},
		{Name: PodOwnNode, Description: "pod → its node (hostNetwork server) through " + m.local(),
			ClientNS: p1a, ServerNS: n1, Listen: any(ServicePort), Dial: hostPort(node1IP, ServicePort)},
		{Name: PodOtherNode, Description: "pod → the other node (hostNetwork server), routed by its node",
			ClientNS: p1a, ServerNS: n2, Listen: any(ServicePort), Dial: hostPort(node2IP, ServicePort)},
		{Name: PodPodSameNode, Description: "pod → pod on the same node through " + m.local(),
			ClientNS: p1a, ServerNS: p1b, Listen: any(ServicePort), Dial: hostPort(a.pod1b, ServicePort)},
		{Name: PodPodOtherNode, Description: "pod → pod on the other node, " + m.cross(),
			ClientNS: p1a, ServerNS: p2a, Listen: any(ServicePort), Dial: hostPort(a.pod2a, ServicePort)},
		{Name: NodeServiceLocal, Description: "node → Service ClusterIP, endpoint on this node: " + svc,
			ClientNS: n1, ServerNS: p1b, Listen: any(TargetPort), Dial: hostPort(svcLocalIP, ServicePort), Service: true},
		{Name: NodeServiceRemote, Description: "node → Service ClusterIP, endpoint on the other node: " + svc,
			ClientNS: n1, ServerNS: p2a, Listen: any(TargetPort), Dial: hostPort(svcRemoteIP, ServicePort), Service: true},
		{Name: PodServiceLocal, Description: "pod → Service ClusterIP, endpoint on the same node: " + svc,
			ClientNS: p1a, ServerNS: p1b, Listen: any(TargetPort), Dial: hostPort(svcLocalIP, ServicePort), Service: true},
		{Name: PodServiceRemote, Description: "pod → Service ClusterIP, endpoint on the other node: " + svc,
			ClientNS: p1a, ServerNS: p2a, Listen: any(TargetPort), Dial: hostPort(svcRemoteIP, ServicePort), Service: true},
	}
	for i := range paths {
		p := &paths[i]
		p.Mode = m
		why := ""
		switch {
		case m == Macvlan && p.Service:
			why = "macvlan pods bypass the node's stack, so kube-proxy's Service rules never see their packets (the Macvlan CNI has no Services)"
		case m == Macvlan && p.Name == PodOwnNode:
			why = "a macvlan child cannot reach its parent device: a macvlan pod cannot reach its own node"
		}
		if why != "" {
			*p = Path{Name: p.Name, Mode: m, NotApplicable: why}
		}
	}
	return paths
}

// String names the path with its mode: "vxlan pod-pod-other-node".
func (p Path) String() string { return fmt.Sprintf("%s %s", p.Mode, p.Name) }
