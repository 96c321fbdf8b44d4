package node

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Macvlan network's CNI configuration follows the macvlan plugin's
// network configuration reference (containernetworking/plugins,
// plugins/main/macvlan): "master (string, optional): name of the host
// interface to enslave. Defaults to default route interface." — the
// node's uplink, named, for a node has no default route; "mode (string,
// optional): one of "bridge", "private", "vepa", "passthru". Defaults to
// "bridge"" — bridge, said, since the pods of a node and its shim talk as
// siblings of one parent only in bridge mode; and host-local's ranges
// ("subnet", "rangeStart", "rangeEnd", "gateway") and "routes" ("dst",
// "gw").
func TestMacvlanCNIConfig(t *testing.T) {
	p := memberPaths("/d", Member{Name: "loadgen-node-2", Netns: "lgnode-2"})
	m := multiMembers(2)[1]
	conf, err := macvlanCNIConfig(p, MultiAddresses, m, "198.18.81.0/24")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct {
			Type, Master, Mode string
			IPAM               struct {
				Type, DataDir string
				Ranges        [][]map[string]string
				Routes        []map[string]string
			}
		}
	}
	if err := json.Unmarshal([]byte(conf), &c); err != nil {
		t.Fatalf("%v\n%s", err, conf)
	}
	if len(c.Plugins) != 2 || c.Plugins[0].Type != "macvlan" || c.Plugins[1].Type != "portmap" {
		t.Fatalf("plugins %+v", c.Plugins)
	}
	mv := c.Plugins[0]
	if mv.Master != "eth0" || mv.Mode != "bridge" || mv.IPAM.Type != "host-local" || !strings.HasPrefix(mv.IPAM.DataDir, "/d") {
		t.Errorf("macvlan %+v", mv)
	}
	// A pod's subnet is the whole pod network (pods of the other node are
	// on its link); its addresses are its node's podCIDR but the shim's.
	want := map[string]string{"subnet": "198.18.80.0/21", "rangeStart": "198.18.81.2", "rangeEnd": "198.18.81.254", "gateway": "198.18.81.1"}
	if len(mv.IPAM.Ranges) != 1 || len(mv.IPAM.Ranges[0]) != 1 {
		t.Fatalf("ranges %v", mv.IPAM.Ranges)
	}
	for k, v := range want {
		if got := mv.IPAM.Ranges[0][0][k]; got != v {
			t.Errorf("range %s = %q, want %q", k, got, v)
		}
	}
	routes := map[string]string{}
	for _, r := range mv.IPAM.Routes {
		routes[r["dst"]] = r["gw"]
	}
	if routes["198.18.88.0/21"] != "198.18.81.1" || routes["198.18.72.0/24"] != "198.18.81.1" || len(routes) != 2 {
		t.Errorf("routes %v: want the Services and the underlay through the shim", routes)
	}
	if _, err := macvlanCNIConfig(p, MultiAddresses, m, "fd00::/64"); err == nil {
		t.Error("an IPv6 podCIDR: no error")
	}
}

// The kube-proxy of the Macvlan network masquerades what goes to a
// Service, in its mode's section: KubeProxyIPTablesConfiguration's and
// KubeProxyNFTablesConfiguration's masqueradeAll ("tells kube-proxy to
// SNAT all traffic sent to Service cluster IPs … This may be required
// with some CNI plugins").
func TestKubeProxyMasqueradeAll(t *testing.T) {
	m := multiMembers(2)[0]
	p := memberPaths("/d", m)
	for _, mode := range []string{ProxyIPTables, ProxyNFTables} {
		b, err := kubeProxyConfig(p, MultiAddresses, m, mode, "/kc", true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), mode+":\n  masqueradeAll: true") {
			t.Errorf("%s with masqueradeAll:\n%s", mode, b)
		}
		b, _ = kubeProxyConfig(p, MultiAddresses, m, mode, "/kc", false)
		if strings.Contains(string(b), "masqueradeAll") {
			t.Errorf("%s without masqueradeAll:\n%s", mode, b)
		}
	}
}

// Config's network: the one node runs the bridge plugin, several Flannel
// (with flanneld) or Macvlan (with no backend).
func TestCheckCNI(t *testing.T) {
	for _, c := range []struct {
		cfg     Config
		cni     string
		wantErr string
	}{
		{Config{}, CNIBridge, ""},
		{Config{CNI: CNIMacvlan}, "", "for several nodes"},
		{Config{Nodes: 2, Flanneld: "/f"}, CNIFlannel, ""},
		{Config{Nodes: 2}, "", "call BuildFlannel"},
		{Config{Nodes: 2, CNI: CNIMacvlan}, CNIMacvlan, ""},
		{Config{Nodes: 2, CNI: CNIMacvlan, Backend: FlannelVXLAN}, "", "not macvlan"},
		{Config{Nodes: 2, CNI: "calico"}, "", "flannel or macvlan"},
	} {
		err := c.cfg.checkCNI()
		switch {
		case c.wantErr == "" && (err != nil || c.cfg.CNI != c.cni):
			t.Errorf("%+v: %v, CNI %q; want %q", c.cfg, err, c.cfg.CNI, c.cni)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.wantErr)
		}
	}
}
