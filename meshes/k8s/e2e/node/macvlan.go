package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Macvlan network of several nodes: each pod's interface is a macvlan
// child (bridge mode) of its node's uplink, so its frames go onto the
// underlay without crossing the node's IP stack, as with the Macvlan CNI
// on a cloud's or a lab's L2. Debian's containernetworking-plugins ship
// the macvlan and host-local plugins, and the kernel has MACVLAN built in.
//
// What a macvlan network lacks, and what is added to make it a cluster's:
//
//   - A macvlan child cannot reach its parent (macvlan's isolation), so a
//     node cannot reach its own pods, nor its pods their node. Each node
//     gets a "shim": a macvlan child of its own uplink (MacvlanShim), with
//     the first address of its podCIDR, which its pods' frames reach as a
//     sibling's. The node routes the whole pod network through the shim;
//     the pods route the Services, the underlay and the control plane
//     through it (their gateway). Kubelet probes and the node's own
//     connections go through it.
//   - The pods' addresses are all on the underlay's L2: a pod's subnet is
//     the whole pod network (host-local hands out only its node's podCIDR),
//     so a pod reaches a pod on another node directly, by ARP.
//   - Services: a pod's packet to a Service reaches its node's kube-proxy
//     through the shim, and goes on to the endpoint SNATed to the node
//     (kube-proxy's masqueradeAll), or the endpoint would answer the pod
//     straight over the underlay from its own address. What leaves the pod
//     network (to a node, the control plane) is masqueraded too, as
//     flanneld's --ip-masq does.

// MacvlanShim is each node's macvlan child of its uplink (see above).
const MacvlanShim = "lgshim"

// macvlanMasq is each node's rule for what leaves the pod network.
func macvlanMasq(a Addresses) []string {
	return []string{"-s", a.PodCIDR, "!", "-d", a.PodCIDR, "-m", "comment", "--comment", "loadgen-macvlan", "-j", "MASQUERADE"}
}

// shimAddr is the shim's address on a node: the first of its podCIDR, the
// gateway of its pods.
func shimAddr(podCIDR string) (string, error) {
	_, sub, err := net.ParseCIDR(podCIDR)
	if err != nil || sub.IP.To4() == nil {
		return "", fmt.Errorf("podCIDR %q: want an IPv4 subnet", podCIDR)
	}
	ip := slices.Clone(sub.IP.To4())
	ip[3]++
	return ip.String(), nil
}

// hostRange is the range of a node's pods: its podCIDR but the network's,
// the shim's and the broadcast's addresses.
func hostRange(podCIDR string) (start, end string, err error) {
	_, sub, err := net.ParseCIDR(podCIDR)
	if err != nil || sub.IP.To4() == nil {
		return "", "", fmt.Errorf("podCIDR %q: want an IPv4 subnet", podCIDR)
	}
	first, last := slices.Clone(sub.IP.To4()), slices.Clone(sub.IP.To4())
	for i := range last {
		last[i] |= ^sub.Mask[i]
	}
	first[3] += 2
	last[3]--
	return first.String(), last.String(), nil
}

// macvlanCNIConfig is a node's CNI configuration: Debian's macvlan plugin
// on the node's uplink in bridge mode, host-local IPAM handing out the
// node's podCIDR within the whole pod network, the shim as the gateway
// for the Services, the underlay and the control plane; portmap after, as
// on the other networks.
func macvlanCNIConfig(p paths, a Addresses, m Member, podCIDR string) (string, error) {
	gw, err := shimAddr(podCIDR)
	if err != nil {
		return "", err
	}
	start, end, err := hostRange(podCIDR)
	if err != nil {
		return "", err
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "loadgen-macvlan",
		"plugins": []any{
			map[string]any{
				"type":   "macvlan",
				"master": m.Uplink,
				"mode":   "bridge",
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": p.cniIPAM,
					"ranges": [][]map[string]string{{{
						"subnet": a.PodCIDR, "rangeStart": start, "rangeEnd": end, "gateway": gw,
					}}},
					"routes": []map[string]string{
						{"dst": a.ServiceCIDR, "gw": gw}, {"dst": a.Underlay, "gw": gw},
					},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n", err
}

// startMacvlan makes every node's Macvlan network from its podCIDR (the
// kubelets have waited for it): the shim and its route, the masquerade
// rule and the CNI configuration, which makes the node Ready.
func (n *Node) startMacvlan(ctx context.Context) error {
	for _, m := range n.Members {
		n.say("macvlan on %s%s", m.Uplink, n.on(m))
		nd, err := n.Client.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		podCIDR := nd.Spec.PodCIDR
		gw, err := shimAddr(podCIDR)
		if err != nil {
			return fmt.Errorf("node %s: %w", m.Name, err)
		}
		steps := [][]string{
			{"ip", "link", "add", MacvlanShim, "link", m.Uplink, "type", "macvlan", "mode", "bridge"},
			{"ip", "addr", "add", gw + "/32", "dev", MacvlanShim},
			{"ip", "link", "set", MacvlanShim, "up"},
			{"ip", "route", "add", n.Addr.PodCIDR, "dev", MacvlanShim, "src", gw},
			append([]string{"iptables", "-w", "-t", "nat", "-A", "POSTROUTING"}, macvlanMasq(n.Addr)...),
		}
		for _, s := range steps {
			if _, err := m.run(ctx, s[0], s[1:]...); err != nil {
				return fmt.Errorf("node %s: macvlan: %w", m.Name, err)
			}
		}
		conf, err := macvlanCNIConfig(n.mpaths(m), n.Addr, m, podCIDR)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(n.mpaths(m).cniConfDir, "10-macvlan.conflist"), []byte(conf)); err != nil {
			return err
		}
	}
	return nil
}
