package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
)

// TestNodeMacvlan starts two nodes whose pods are macvlan children of
// their node's uplink (issue 41, point 1) and measures across them with
// `loadgen k8s paths`, checking each path against the devices' own
// counters:
//
//   - pod ↔ pod across the nodes goes straight over the underlay: the
//     client node's uplink carried the stream, its shim (the macvlan
//     child through which the node and its pods talk) hardly anything;
//   - pod → a Service whose endpoint is on the other node goes through
//     the client node's kube-proxy: in through its shim and out again;
//   - TCP_RR and TCP_STREAM complete on both, and DNS (the workers look
//     the Services up) and the node's probes work through the shim;
//   - teardown leaves nothing on the machine (startNodes).
func TestNodeMacvlan(t *testing.T) {
	beside(t)
	takeSeveralNodes(t)
	start := time.Now()
	n := startNodes(t, node.Config{Dir: flannelDir, Nodes: 2, CNI: node.CNIMacvlan})
	ctx := context.Background()
	bin := buildLoadgen(t)
	nodes, err := n.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 || nodes.Items[0].Spec.PodCIDR == nodes.Items[1].Spec.PodCIDR {
		t.Fatalf("%d nodes: want two, each with a podCIDR of its own", len(nodes.Items))
	}

	// measure runs k8s paths on one path and returns its table and how
	// many bytes each node's uplink and shim sent and received meanwhile.
	measure := func(t *testing.T, path, tests string) (*paths.Table, map[string]linkDelta) {
		before := linkBytes(t, n)
		tab := pathsAcross(t, n, bin, "macvlan", "macvlan-paths", "--paths", path, "--tests", tests)
		after := linkBytes(t, n)
		delta := map[string]linkDelta{}
		for name, b := range after {
			delta[name] = b.minus(before[name])
		}
		return tab, delta
	}
	// streamed is what the pods' TCP_STREAM row sent, in bytes.
	streamed := func(tab *paths.Table, path string) float64 {
		for _, row := range tab.Rows {
			if row.Test == paths.TestTCPStream && row.Path == path && row.Median != nil {
				return *row.Median * 1e9 / 8 * tab.DurationSeconds
			}
		}
		t.Fatalf("no %s %s row", path, paths.TestTCPStream)
		return 0
	}

	t.Run("pod-pod", func(t *testing.T) {
		tab, d := measure(t, paths.PodPodOtherNode, paths.TestTCPRR+","+paths.TestTCPStream)
		sent := streamed(tab, paths.PodPodOtherNode)
		client, server := d[tab.Nodes.Other], d[tab.Nodes.Server]
		// The pods' frames leave the client node's uplink and enter the
		// server node's, as the stream's bytes (the hostNetwork row's
		// streams cross the uplinks too).
		if float64(client.uplinkTX) < 0.9*sent || float64(server.uplinkRX) < 0.9*sent {
			t.Errorf("the uplinks carried %d bytes out of %s and %d into %s; the pods' stream sent %.0f", client.uplinkTX, tab.Nodes.Other, server.uplinkRX, tab.Nodes.Server, sent)
		}
		// and never cross a node's stack: the shims carry the probes and
		// the workers' DNS and control traffic, not the stream.
		for name, s := range map[string]linkDelta{tab.Nodes.Other: client, tab.Nodes.Server: server} {
			if float64(s.shimTX+s.shimRX) > 0.05*sent {
				t.Errorf("%s's shim carried %d bytes during a pod ↔ pod stream of %.0f: the pods' frames went through the node", name, s.shimTX+s.shimRX, sent)
			}
		}
		t.Logf("pod ↔ pod: the stream %.0f MB; %s's uplink sent %d MB, its shim %d kB; %s's uplink received %d MB, its shim %d kB",
			sent/(1<<20), tab.Nodes.Other, client.uplinkTX>>20, (client.shimTX+client.shimRX)>>10, tab.Nodes.Server, server.uplinkRX>>20, (server.shimTX+server.shimRX)>>10)
	})

	t.Run("service", func(t *testing.T) {
		tab, d := measure(t, paths.PodClusterIPOther, paths.TestTCPStream)
		sent := streamed(tab, paths.PodClusterIPOther)
		client := d[tab.Nodes.Other]
		// To a Service, the pod's packets go to its node through the shim
		// (the pods' gateway), and on to the endpoint out of it, SNATed.
		if float64(client.shimRX) < 0.9*sent || float64(client.shimTX) < 0.9*sent {
			t.Errorf("%s's shim received %d and sent %d bytes; the pod's stream to the Service sent %.0f: it did not cross the node's kube-proxy", tab.Nodes.Other, client.shimRX, client.shimTX, sent)
		}
		t.Logf("pod → Service on the other node: the stream %.0f MB; %s's shim received %d MB and sent %d MB", sent/(1<<20), tab.Nodes.Other, client.shimRX>>20, client.shimTX>>20)
	})
	t.Logf("TestNodeMacvlan took %v (its start and teardown: the rest)", time.Since(start).Round(time.Second))
}

// linkDelta is what a node's uplink and shim carried, in bytes.
type linkDelta struct{ uplinkRX, uplinkTX, shimRX, shimTX uint64 }

func (a linkDelta) minus(b linkDelta) linkDelta {
	return linkDelta{a.uplinkRX - b.uplinkRX, a.uplinkTX - b.uplinkTX, a.shimRX - b.shimRX, a.shimTX - b.shimTX}
}

// linkBytes reads each node's uplink and shim counters.
func linkBytes(t *testing.T, n *node.Node) map[string]linkDelta {
	t.Helper()
	out := map[string]linkDelta{}
	for _, m := range n.Members {
		var d linkDelta
		d.uplinkRX, d.uplinkTX = devBytes(t, m, m.Uplink)
		d.shimRX, d.shimTX = devBytes(t, m, node.MacvlanShim)
		out[m.Name] = d
	}
	return out
}

// devBytes are the bytes a device of a node received and sent.
func devBytes(t *testing.T, m node.Member, dev string) (rx, tx uint64) {
	t.Helper()
	b, err := m.Run(context.Background(), "ip", "-s", "-j", "link", "show", dev)
	if err != nil {
		t.Fatalf("node %s: %v", m.Name, err)
	}
	var links []struct {
		Stats64 struct {
			RX, TX struct {
				Bytes uint64 `json:"bytes"`
			}
		} `json:"stats64"`
	}
	if err := json.Unmarshal([]byte(b), &links); err != nil || len(links) != 1 {
		t.Fatalf("node %s: %s stats %q: %v", m.Name, dev, b, err)
	}
	return links[0].Stats64.RX.Bytes, links[0].Stats64.TX.Bytes
}
