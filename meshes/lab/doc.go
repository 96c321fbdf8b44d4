// Package lab builds, on one Linux machine, the small Kubernetes-like
// network that the Cilium, Calico, Macvlan and Flannel CNI benchmark
// reports measure: two "nodes" joined by an underlay link, "pods" behind
// each node's bridge, a VXLAN overlay, macvlan pods and a ClusterIP
// Service implemented the way kube-proxy's iptables mode does it. Every
// node and every pod is a network namespace, so the load generator can
// run the reports' netperf-style tests (TCP_RR, TCP_CRR, TCP_STREAM) over
// each path without a cluster.
//
// Topology (all addresses in 198.18.0.0/15, the RFC 2544 benchmarking
// range, so nothing here can collide with or leak into a real network;
// ".1.10" is short for 198.18.1.10):
//
//	pod1a .1.10  pod1b .1.11  pod1v .5.10     pod2v .3.10   pod2a .2.10
//	     |            |            |               |             |
//	+----|------------|------------|--+    +-------|-------------|---+
//	|  [cni0 198.18.1.1] [cni1 .5.1]  |    | [cni1 .3.1]  [cni0 .2.1]|
//	|  node1               (mtu 1450) |    | (mtu 1450)        node2 |
//	|  vxlan0 .4.1 ~~~~~~~~~ VNI 1, UDP 4789 ~~~~~~~~~~  vxlan0 .4.2 |
//	|  underlay .0.1 =========== veth pair =========== underlay .0.2 |
//	|  nat PREROUTING DNAT            |    |                         |
//	|  198.19.0.10:9000 -> .2.10:9000 |    |                         |
//	+----|----------------------------+    +-------------------|-----+
//	     | macvlan on underlay                                 | macvlan
//	podm1 .0.21                                          podm2 .0.22
//
// node1 and node2 forward IPv4 and route each other's cni0 subnet over
// the underlay with no encapsulation (Flannel host-gw, Calico BGP without
// encapsulation). pod1v and pod2v sit on separate bridges (cni1) whose
// subnets the nodes route only through vxlan0, in both directions, so
// that path is a genuine overlay (Flannel vxlan, Calico VXLAN, Cilium
// tunnel); vxlan0's packets ride on the underlay. podm1 and podm2 own
// macvlan (bridge mode) children of the nodes' underlay veth ends: their
// frames bypass the nodes' IP stacks, as with the Macvlan CNI. node1's nat
// PREROUTING chain DNATs the ClusterIP 198.19.0.10:9000 to pod2a on the
// other node, as kube-proxy's iptables mode does; conntrack undoes it on
// the way back.
//
// Paths lists, in report order, which namespace dials which address.
// Start builds the lab and Close (or, after a crash, Cleanup) removes
// it; deleting a namespace deletes every device in it, so nothing is left
// behind and nothing is ever created in the root namespace. IPv6 is
// switched off inside the lab so neighbour discovery does not add
// packets to the links being measured.
package lab
