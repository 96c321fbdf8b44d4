package node

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A subnet.env is read as Flannel's CNI plugin reads it: every field, or
// an error naming those missing.
func TestReadSubnetEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "subnet.env")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FLANNEL_NETWORK=198.18.80.0/21\nFLANNEL_SUBNET=198.18.81.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n")
	e, err := readSubnetEnv(path)
	if err != nil || e != (subnetEnv{Network: "198.18.80.0/21", Subnet: "198.18.81.1/24", MTU: 1450, IPMasq: true}) {
		t.Errorf("%+v, %v", e, err)
	}
	write("FLANNEL_NETWORK=198.18.80.0/21\nFLANNEL_SUBNET=198.18.81.1/24\n")
	if _, err := readSubnetEnv(path); err == nil || !strings.Contains(err.Error(), "missing FLANNEL_MTU, FLANNEL_IPMASQ") {
		t.Errorf("missing fields: %v", err)
	}
	write("FLANNEL_NETWORK=x\n")
	if _, err := readSubnetEnv(path); err == nil {
		t.Error("a bad network: no error")
	}
	if _, err := readSubnetEnv(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("no file: %v", err)
	}
}

// The CNI configuration is what Flannel's CNI plugin delegates to the
// bridge plugin (cni-plugin's doCmdAdd and getDelegateIPAM): type bridge,
// ipMasq the opposite of FLANNEL_IPMASQ, the backend's MTU, isGateway,
// host-local on the node's subnet (its network address, as the plugin
// parses FLANNEL_SUBNET) with a route to FLANNEL_NETWORK after the
// configured ones; with no default route.
func TestFlannelCNIConfig(t *testing.T) {
	p := pathsOf("/x/nodes/loadgen-node-2")
	for _, e := range []subnetEnv{
		{Network: "198.18.80.0/21", Subnet: "198.18.81.1/24", MTU: 1450, IPMasq: true},
		{Network: "198.18.80.0/21", Subnet: "198.18.81.1/24", MTU: 1472, IPMasq: false},
	} {
		var c struct {
			CNIVersion string `json:"cniVersion"`
			Name       string
			Plugins    []struct {
				Type, Bridge           string
				IsGateway, HairpinMode bool
				IsDefaultGateway       bool
				IPMasq                 bool `json:"ipMasq"`
				MTU                    int
				IPAM                   struct {
					Type, DataDir string
					Ranges        [][]map[string]string
					Routes        []map[string]string
				}
				Capabilities map[string]bool
			}
		}
		if err := json.Unmarshal([]byte(flannelCNIConfig(p, MultiAddresses, e)), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Plugins) != 2 || c.Plugins[1].Type != "portmap" || !c.Plugins[1].Capabilities["portMappings"] {
			t.Fatalf("plugins %+v", c.Plugins)
		}
		b := c.Plugins[0]
		if b.Type != "bridge" || b.Bridge != "cni0" || !b.IsGateway || b.IsDefaultGateway || !b.HairpinMode || b.IPMasq == e.IPMasq || b.MTU != e.MTU {
			t.Errorf("bridge %+v for %+v", b, e)
		}
		if b.IPAM.Type != "host-local" || b.IPAM.DataDir != p.cniIPAM || len(b.IPAM.Ranges) != 1 || b.IPAM.Ranges[0][0]["subnet"] != "198.18.81.0/24" {
			t.Errorf("ipam %+v", b.IPAM)
		}
		var routes []string
		for _, r := range b.IPAM.Routes {
			routes = append(routes, r["dst"])
		}
		if strings.Join(routes, " ") != "198.18.88.0/21 198.18.72.0/24 198.18.80.0/21" {
			t.Errorf("routes %v: want the Services, the underlay, then FLANNEL_NETWORK; no default", routes)
		}
	}
}

func TestFlannelNetConf(t *testing.T) {
	var c struct {
		Network        string
		EnableNFTables bool
		Backend        struct{ Type string }
	}
	if err := json.Unmarshal(flannelNetConf(MultiAddresses, FlannelHostGW), &c); err != nil {
		t.Fatal(err)
	}
	if c.Network != MultiAddresses.PodCIDR || c.EnableNFTables || c.Backend.Type != "host-gw" {
		t.Errorf("%+v", c)
	}
	for _, b := range []string{"vxlan", "host-gw", "udp"} {
		if err := checkBackend(b); err != nil {
			t.Error(err)
		}
	}
	if err := checkBackend("ipip"); err == nil || !strings.Contains(err.Error(), "host-gw, vxlan, udp") {
		t.Errorf("ipip: %v", err)
	}
}

// Several nodes' addresses are in the benchmark range, apart from the one
// node's, the lab's and the sidecar tests', and from each other.
func TestMultiAddresses(t *testing.T) {
	_, bench, _ := net.ParseCIDR("198.18.0.0/15")
	forbidden := []string{"198.18.0.0/22", "198.18.4.0/23", "198.18.100.0/24", "198.18.210.0/24", "198.19.0.0/16",
		DefaultAddresses.NodeIP + "/32", DefaultAddresses.PodCIDR, DefaultAddresses.ServiceCIDR}
	a := MultiAddresses
	nets := []string{a.Underlay, a.PodCIDR, a.ServiceCIDR}
	var parsed []*net.IPNet
	for _, s := range nets {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bench.Contains(n.IP) {
			t.Errorf("%s is not in 198.18.0.0/15", s)
		}
		for _, f := range forbidden {
			_, fn, _ := net.ParseCIDR(f)
			if fn.Contains(n.IP) || n.Contains(fn.IP) {
				t.Errorf("%s overlaps %s", s, f)
			}
		}
		for _, o := range parsed {
			if o.Contains(n.IP) || n.Contains(o.IP) {
				t.Errorf("%s overlaps %s", s, o)
			}
		}
		parsed = append(parsed, n)
	}
	_, under, _ := net.ParseCIDR(a.Underlay)
	_, svc, _ := net.ParseCIDR(a.ServiceCIDR)
	if !under.Contains(net.ParseIP(a.NodeIP)) || !svc.Contains(net.ParseIP(a.APIServiceIP)) || !svc.Contains(net.ParseIP(a.DNSServiceIP)) {
		t.Errorf("addresses %+v", a)
	}
	ms := multiMembers(2)
	if len(ms) != 2 || ms[0].Name != "loadgen-node-1" || ms[1].IP != "198.18.72.12" || ms[0].Netns != "lgnode-1" || ms[1].CgroupRoot != "loadgen-node-2" {
		t.Errorf("members %+v", ms)
	}
	for _, m := range ms {
		if !under.Contains(net.ParseIP(m.IP)) || m.IP == a.NodeIP {
			t.Errorf("member %s at %s", m.Name, m.IP)
		}
	}
}

// The one node's configuration is what it was: its kubelet on the node's
// address under the one cgroup root, its pods' logs where kubelets keep
// them; each of several nodes its own address, cgroup root, pod log
// directory and runc root, its components started in its namespace.
func TestMemberConfigs(t *testing.T) {
	one := oneMember(DefaultAddresses)
	kc, err := kubeletConfig(pathsOf("/d"), DefaultAddresses, one, "/ca")
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	if err := yaml.Unmarshal(kc, &k); err != nil {
		t.Fatal(err)
	}
	if k["address"] != DefaultAddresses.NodeIP || k["cgroupRoot"] != "/"+CgroupRoot || k["podLogsDir"] != nil {
		t.Errorf("one node's kubelet: %v", k)
	}
	if procName("kubelet", one) != "kubelet" || kubeletUser(one) != "kubelet" || memberPaths("/d", one) != pathsOf("/d") {
		t.Errorf("one node: names and paths changed")
	}
	if bin, args := one.inNetns("x", "y"); bin != "x" || len(args) != 1 {
		t.Errorf("one node runs %s %v", bin, args)
	}
	if c := containerdConfig(pathsOf("/d"), "p:1", "", CNIBinDir); strings.Contains(c, "Root =") {
		t.Errorf("one node's containerd has a runc root:\n%s", c)
	}

	m := multiMembers(2)[1]
	p := memberPaths("/d", m)
	kc, err = kubeletConfig(p, MultiAddresses, m, "/ca")
	if err != nil {
		t.Fatal(err)
	}
	k = nil
	if err := yaml.Unmarshal(kc, &k); err != nil {
		t.Fatal(err)
	}
	if k["address"] != m.IP || k["healthzBindAddress"] != m.IP || k["cgroupRoot"] != "/loadgen-node-2" || k["podLogsDir"] != "/d/nodes/loadgen-node-2/pod-logs" {
		t.Errorf("node 2's kubelet: %v", k)
	}
	if p.containerdSock != "/d/nodes/loadgen-node-2/containerd/containerd.sock" || procName("kubelet", m) != "kubelet-loadgen-node-2" || kubeletUser(m) != "kubelet-loadgen-node-2" {
		t.Errorf("node 2: %+v", p)
	}
	if bin, args := m.inNetns("/bin/kubelet", "--v=1"); bin != "nsenter" || strings.Join(args, " ") != "--net=/run/netns/lgnode-2 -- /bin/kubelet --v=1" {
		t.Errorf("node 2 runs %s %v", bin, args)
	}
	if c := containerdConfig(p, "p:1", "/d/nodes/loadgen-node-2/runc", CNIBinDir); !strings.Contains(c, `Root = "/d/nodes/loadgen-node-2/runc"`) {
		t.Errorf("node 2's containerd has no runc root of its own:\n%s", c)
	}
	pc, err := kubeProxyConfig(p, MultiAddresses, m, ProxyNFTables, "/kc", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bindAddress: 198.18.72.12", "clusterCIDR: 198.18.80.0/21", "hostnameOverride: loadgen-node-2", "- 198.18.72.12/32", "mode: nftables"} {
		if !strings.Contains(string(pc), want) {
			t.Errorf("node 2's kube-proxy lacks %q:\n%s", want, pc)
		}
	}
	prom := prometheusConfig(multiMembers(2), "/c", "/k")
	if strings.Count(prom, `targets: ["198.18.72.11:10250"]`) != 2 || strings.Count(prom, "labels: {node: loadgen-node-2}") != 2 {
		t.Errorf("Prometheus does not scrape both kubelets:\n%s", prom)
	}
	var us []string
	for _, u := range users([]string{"loadgen-node-1", "loadgen-node-2"}, CNIFlannel) {
		us = append(us, u.name+"="+u.cn)
	}
	if got := strings.Join(us, " "); !strings.Contains(got, "kubelet-loadgen-node-1=system:node:loadgen-node-1 kubelet-loadgen-node-2=system:node:loadgen-node-2 flannel="+FlannelUser) {
		t.Errorf("users %s", got)
	}
}

// Flannel's udp backend publishes an empty backend type.
func TestAnnotatedBackend(t *testing.T) {
	for _, c := range []struct {
		a    map[string]string
		want string
	}{
		{map[string]string{"flannel.alpha.coreos.com/backend-type": "vxlan", "flannel.alpha.coreos.com/kube-subnet-manager": "true"}, "vxlan"},
		{map[string]string{"flannel.alpha.coreos.com/backend-type": "", "flannel.alpha.coreos.com/kube-subnet-manager": "true"}, "udp"},
		{map[string]string{"flannel.alpha.coreos.com/backend-type": ""}, ""},
		{nil, ""},
	} {
		if got := annotatedBackend(c.a); got != c.want {
			t.Errorf("%v: %q, want %q", c.a, got, c.want)
		}
	}
}
