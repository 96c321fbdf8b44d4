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

// The Macvlan network of several nodes: each pod a macvlan child of its
// node's uplink (Debian's macvlan and host-local plugins), plus what makes
// it a cluster's: a shim per node through which node and pods reach each
// other (a child cannot reach its parent), pods on the whole pod network
// (pod to pod by ARP), and kube-proxy's masqueradeAll for Services.
// Why each: docs/test-cluster.md, "Two nodes with Macvlan".

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
