// Package node starts a real one-node Kubernetes cluster on this machine,
// for the end-to-end tests and for people trying things by hand: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and
// kube-proxy built from the k8s.io/kubernetes module this module requires;
// containerd, runc and the CNI plugins from Debian's packages; CoreDNS and
// metrics-server built from their Go modules; Prometheus from Debian,
// scraping the kubelet's cAdvisor and resource metrics. Images are made
// here and imported: nothing is pulled.
//
// Every process runs on the host, in a process group of its own, with its
// log in DIR/logs; the state file (DIR/state.json) records what Start
// changed on the machine, so that Down — in this process or another one,
// after a crash too — puts all of it back: processes, pod sandboxes and
// their network namespaces, mounts, cgroups, the bridge, the node's
// address, kube-proxy's and the kubelet's iptables chains and nft tables,
// and the sysctls the components changed.
package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The node's names.
const (
	NodeName    = "loadgen-node"
	ContextName = "loadgen-node"
	// CgroupRoot is the kubelet's cgroup root: every pod's cgroup is under
	// /sys/fs/cgroup/CONTROLLER/loadgen-node/kubepods.
	CgroupRoot = "loadgen-node"
)

// Ports, all on the node's address (never on 127.0.0.1, so that nothing
// the node runs takes a port a test on loopback wants).
const (
	PortAPIServer        = 6443
	PortEtcd             = 2379
	PortEtcdPeer         = 2380
	PortKubelet          = 10250
	PortKubeletHealthz   = 10248
	PortControllerMgr    = 10257
	PortScheduler        = 10259
	PortKubeProxyMetrics = 10249
	PortKubeProxyHealthz = 10256
	PortCoreDNSHealth    = 8080
	PortCoreDNSReady     = 8181
	PortMetricsServer    = 4443
	PortPrometheus       = 9090
)

// Addresses are the node's, in RFC 2544's benchmark range 198.18.0.0/15
// but apart from what the lab and the sidecar tests use (198.18.0-5.x,
// 198.18.100.x, 198.18.210.x, 198.19.0.0/16), so that the lab's tests and
// a node can run at once.
type Addresses struct {
	NodeIP       string // on lo: the API server, the kubelet, every component
	PodCIDR      string
	PodGateway   string // the bridge's address
	ServiceCIDR  string
	APIServiceIP string // kubernetes.default
	DNSServiceIP string // kube-system/kube-dns
	Bridge       string
	// Underlay is the nodes' shared network when there are several
	// (MultiAddresses): NodeIP is then the control plane's address, on the
	// host's end of it, and PodCIDR the cluster's pod network, of which
	// each node gets a /24.
	Underlay string `json:",omitempty"`
}

// DefaultAddresses are the one node's.
var DefaultAddresses = Addresses{
	NodeIP:       "198.18.64.1",
	PodCIDR:      "198.18.65.0/24",
	PodGateway:   "198.18.65.1",
	ServiceCIDR:  "198.18.112.0/20",
	APIServiceIP: "198.18.112.1",
	DNSServiceIP: "198.18.112.10",
	Bridge:       "lgnode0",
}

// Proxy modes kube-proxy runs in here. ipvs is not among them: this
// kernel is built without CONFIG_IP_VS.
const (
	ProxyIPTables = "iptables"
	ProxyNFTables = "nftables"
)

// Config says where the node lives and what it runs.
type Config struct {
	// Dir is the state directory: configs, PKI, logs, containerd's root,
	// the kubelet's root. Default DefaultDir.
	Dir string
	// Bins are the built components (Build).
	Bins *Bins
	// ProxyMode is kube-proxy's mode: ProxyIPTables (default) or ProxyNFTables.
	ProxyMode string
	// Nodes is how many nodes: 0 or 1 is the one node in the host's
	// network namespace, on the CNI bridge plugin; 2 or more are nodes in
	// network namespaces of their own on an underlay (members.go), with
	// Flannel as the CNI.
	Nodes int
	// Backend is Flannel's backend with several nodes: FlannelVXLAN
	// (default), FlannelHostGW or FlannelUDP.
	Backend string
	// Flanneld is the flanneld binary (BuildFlannel), with several nodes.
	Flanneld string
	// CNI is several nodes' network: CNIFlannel (default), CNIMacvlan or
	// CNICilium. The one node runs CNIBridge.
	CNI string
	// Cilium is the built Cilium directory (BuildCilium), with CNICilium.
	Cilium string
	// KubeProxyReplacement runs Cilium's kube-proxy replacement (socket
	// LB) and no kube-proxy: CNICilium only.
	KubeProxyReplacement bool
	// Log receives progress lines; nil: none.
	Log io.Writer
}

// CNIs the node can run.
const (
	CNIBridge  = "bridge"  // the one node: Debian's bridge plugin on the node's bridge
	CNIFlannel = "flannel" // several nodes: flanneld on each, the bridge plugin as Flannel's CNI plugin delegates to it
	CNIMacvlan = "macvlan" // several nodes: Debian's macvlan plugin on each node's uplink, a host shim (macvlan.go)
	CNICilium  = "cilium"  // several nodes: cilium-agent on each, VXLAN, its eBPF datapath (cilium.go)
)

// MultiCNIs are the networks of several nodes.
var MultiCNIs = []string{CNIFlannel, CNIMacvlan, CNICilium}

// Multi tells whether the configuration is of several nodes.
func (c *Config) Multi() bool { return c.Nodes > 1 }

// checkCNI fills in the network's defaults and checks them: the one node
// runs the bridge plugin; several run Flannel (a backend, flanneld built),
// Macvlan or Cilium (built; the kube-proxy replacement is Cilium's alone).
func (c *Config) checkCNI() error {
	if c.KubeProxyReplacement && c.CNI != CNICilium {
		return errors.New("the kube-proxy replacement is Cilium's: it needs CNI cilium (several nodes)")
	}
	if !c.Multi() {
		switch {
		case c.Backend != "":
			return errors.New("a Flannel backend is for several nodes (Nodes 2 or more): the one node runs the bridge plugin")
		case c.CNI != "" && c.CNI != CNIBridge:
			return fmt.Errorf("CNI %s is for several nodes (Nodes 2 or more): the one node runs the bridge plugin", c.CNI)
		}
		c.CNI = CNIBridge
		return nil
	}
	if c.CNI == "" {
		c.CNI = CNIFlannel
	}
	switch c.CNI {
	case CNIFlannel:
		if c.Backend == "" {
			c.Backend = FlannelVXLAN
		}
		if err := checkBackend(c.Backend); err != nil {
			return err
		}
		if c.Flanneld == "" {
			return errors.New("several nodes run Flannel: call BuildFlannel first")
		}
	case CNIMacvlan:
		if c.Backend != "" {
			return fmt.Errorf("a Flannel backend (%s) is for CNI flannel, not macvlan", c.Backend)
		}
	case CNICilium:
		if c.Backend != "" {
			return fmt.Errorf("a Flannel backend (%s) is for CNI flannel, not cilium (which tunnels with VXLAN)", c.Backend)
		}
		if c.Cilium == "" {
			return errors.New("several nodes run Cilium: call BuildCilium first")
		}
	default:
		return fmt.Errorf("CNI %q: several nodes run %s", c.CNI, strings.Join(MultiCNIs, " or "))
	}
	return nil
}

// DefaultDir is the node's state directory unless told otherwise.
const DefaultDir = "/var/tmp/loadgen-node"

// Node is a running node.
type Node struct {
	Config
	Addr Addresses
	// Kubeconfig is the admin's kubeconfig (cluster-admin).
	Kubeconfig string
	RESTConfig *rest.Config
	Client     kubernetes.Interface
	// PrometheusURL is Prometheus' address (http).
	PrometheusURL string
	// Image is the loadgen image's reference, imported into containerd.
	Image string
	// PauseImage is the sandbox image.
	PauseImage string
	// Members are the nodes, in name order: the one node, or each of
	// several with its network namespace and address.
	Members []Member
	paths   paths
	pki     *pki
	mu      sync.Mutex
	st      *state
}

func (c *Config) say(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "node: "+format+"\n", a...)
	}
}

// Start starts a node (or, with cfg.Nodes > 1, a cluster of several
// nodes on this machine): whatever an earlier node in the same directory
// left is taken down first. On failure everything started is taken down
// again, and the error names the component with its last log lines.
func Start(ctx context.Context, cfg Config) (n *Node, err error) {
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if cfg.ProxyMode == "" {
		cfg.ProxyMode = ProxyIPTables
	}
	if cfg.ProxyMode != ProxyIPTables && cfg.ProxyMode != ProxyNFTables {
		return nil, fmt.Errorf("kube-proxy mode %q: want %s or %s (ipvs cannot run here: the kernel lacks CONFIG_IP_VS)", cfg.ProxyMode, ProxyIPTables, ProxyNFTables)
	}
	if cfg.Nodes < 0 || cfg.Nodes > MaxNodes {
		return nil, fmt.Errorf("%d nodes: want 1 to %d", cfg.Nodes, MaxNodes)
	}
	if err := cfg.checkCNI(); err != nil {
		return nil, err
	}
	if cfg.Bins == nil {
		return nil, errors.New("no components: call Build first")
	}
	if err := Preflight(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	if err := down(cfg.Dir, cfg.Log, cfg.Multi()); err != nil {
		return nil, fmt.Errorf("taking down what an earlier node left in %s: %w", cfg.Dir, err)
	}
	addr, members := DefaultAddresses, []Member{oneMember(DefaultAddresses)}
	if cfg.Multi() {
		addr, members = MultiAddresses, multiMembers(cfg.Nodes)
	}
	cni := cfg.CNI
	if err := checkAddressFree(addr.NodeIP); err != nil {
		return nil, err
	}
	started := time.Now()
	n = &Node{Config: cfg, Addr: addr, Members: members, paths: pathsOf(cfg.Dir)}
	n.st = &state{Dir: cfg.Dir, Started: started.UTC(), Addr: n.Addr, ProxyMode: cfg.ProxyMode, Bins: cfg.Bins.Dir,
		CNI: cni, Backend: cfg.Backend, Flanneld: cfg.Flanneld, Cilium: cfg.Cilium, KubeProxyReplacement: cfg.KubeProxyReplacement}
	defer func() {
		if err != nil {
			if derr := down(cfg.Dir, cfg.Log, cfg.Multi()); derr != nil {
				err = errors.Join(err, fmt.Errorf("and taking it down: %w", derr))
			}
			n = nil
		}
	}()
	if err := n.prepareHost(); err != nil {
		return nil, err
	}
	if cfg.Multi() {
		if err := n.makeUnderlay(ctx); err != nil {
			return nil, err
		}
	}
	if n.pki, err = makePKI(cfg.Dir, n.Addr, n.memberNames(), cni); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	n.Kubeconfig = filepath.Join(cfg.Dir, "admin.kubeconfig")
	if n.RESTConfig, err = clientcmd.BuildConfigFromFlags("", n.Kubeconfig); err != nil {
		return nil, err
	}
	n.RESTConfig.QPS, n.RESTConfig.Burst = 100, 200
	if n.Client, err = kubernetes.NewForConfig(n.RESTConfig); err != nil {
		return nil, err
	}

	// containerd and the images go in parallel with the control plane.
	images := make(chan error, 1)
	go func() { images <- n.startContainerds(ctx) }()
	if err := n.startEtcd(ctx); err != nil {
		<-images
		return nil, err
	}
	if err := n.startAPIServer(ctx); err != nil {
		<-images
		return nil, err
	}
	if err := n.bootstrap(ctx); err != nil {
		<-images
		return nil, err
	}
	if err := n.startControllers(ctx); err != nil {
		<-images
		return nil, err
	}
	if err := <-images; err != nil {
		return nil, err
	}
	for _, m := range n.Members {
		if err := n.startKubelet(ctx, m); err != nil {
			return nil, err
		}
	}
	switch n.CNI {
	case CNIFlannel:
		if err := n.startFlannel(ctx); err != nil {
			return nil, err
		}
	case CNIMacvlan:
		if err := n.startMacvlan(ctx); err != nil {
			return nil, err
		}
	case CNICilium:
		if err := n.startCilium(ctx); err != nil {
			return nil, err
		}
	}
	for _, m := range n.Members {
		if err := n.waitReady(ctx, m); err != nil {
			return nil, err
		}
	}
	// Cilium's kube-proxy replacement is the Services' datapath: no kube-proxy.
	for _, m := range n.Members {
		if cfg.KubeProxyReplacement {
			break
		}
		if err := n.startKubeProxy(ctx, m, cfg.ProxyMode); err != nil {
			return nil, err
		}
	}
	if err := n.startAddons(ctx); err != nil {
		return nil, err
	}
	if err := n.waitServiceAccount(ctx, "default"); err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.st.Image, n.st.Pause = n.Image, n.PauseImage
	err = n.st.save()
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	n.say("up in %v: kubeconfig %s", time.Since(started).Round(100*time.Millisecond), n.Kubeconfig)
	return n, nil
}

// memberNames are the nodes' names.
func (n *Node) memberNames() []string {
	var out []string
	for _, m := range n.Members {
		out = append(out, m.Name)
	}
	return out
}

// mpaths are where a member keeps its containerd, CNI configuration,
// kubelet and kube-proxy: the state directory itself for the one node,
// DIR/nodes/NAME for each of several.
func (n *Node) mpaths(m Member) paths { return memberPaths(n.Dir, m) }

func memberPaths(dir string, m Member) paths {
	if m.Netns == "" {
		return pathsOf(dir)
	}
	return pathsOf(filepath.Join(dir, "nodes", m.Name))
}

// procName is a member's component's name in the state file and its
// log's: kubelet for the one node, kubelet-loadgen-node-1 for one of several.
func procName(component string, m Member) string {
	if m.Netns == "" {
		return component
	}
	return component + "-" + m.Name
}

// ImportLoadgen puts the loadgen image of bins into the node's containerd
// (a node attached to was started with an older build) and makes it the
// node's Image.
func (n *Node) ImportLoadgen(ctx context.Context, bins *Bins) error {
	im, err := loadgenImage(n.Dir, bins.Loadgen)
	if err != nil {
		return err
	}
	for _, m := range n.Members {
		if _, err := run(ctx, "ctr", "--address", n.mpaths(m).containerdSock, "-n", "k8s.io", "images", "import", im.archive); err != nil {
			return err
		}
	}
	n.Image = im.ref
	return nil
}

// Attach returns the node that is up in dir (started by another process,
// `make cluster-up`), to run tests on it without starting one. Its Stop
// takes it down; a caller that attached leaves it up.
func Attach(ctx context.Context, dir string, log io.Writer) (*Node, error) {
	st, err := loadState(dir)
	if err != nil {
		return nil, fmt.Errorf("no node is up in %s: %w", dir, err)
	}
	n := &Node{Config: Config{Dir: st.Dir, Bins: &Bins{Dir: st.Bins}, ProxyMode: st.ProxyMode, Log: log,
		Nodes: len(st.members()), Backend: st.Backend, Flanneld: st.Flanneld, CNI: st.cni(),
		Cilium: st.Cilium, KubeProxyReplacement: st.KubeProxyReplacement},
		Addr: st.Addr, paths: pathsOf(st.Dir), st: st, Image: st.Image, PauseImage: st.Pause,
		Members:    st.members(),
		Kubeconfig: filepath.Join(st.Dir, "admin.kubeconfig"), PrometheusURL: "http://" + net.JoinHostPort(st.Addr.NodeIP, strconv.Itoa(PortPrometheus))}
	n.pki = &pki{dir: filepath.Join(st.Dir, "pki")}
	if dead := n.Dead(); len(dead) > 0 {
		return nil, fmt.Errorf("the node in %s is not whole: %s exited (take it down and up again)", dir, strings.Join(dead, ", "))
	}
	if n.RESTConfig, err = clientcmd.BuildConfigFromFlags("", n.Kubeconfig); err != nil {
		return nil, err
	}
	n.RESTConfig.QPS, n.RESTConfig.Burst = 100, 200
	if n.Client, err = kubernetes.NewForConfig(n.RESTConfig); err != nil {
		return nil, err
	}
	for _, m := range n.Members {
		if err := n.nodeReady(m.Name)(ctx); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Stop takes the node down (Down on its directory).
func (n *Node) Stop() error { return Down(n.Dir, n.Log) }

// record adds a process to the state file.
func (n *Node) record(p *Proc) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.st.Procs = append(n.st.Procs, *p)
	return n.st.save()
}

// proc is the recorded process of a component.
func (n *Node) proc(name string) *Proc {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range n.st.Procs {
		if n.st.Procs[i].Name == name {
			return &n.st.Procs[i]
		}
	}
	return nil
}

// forget drops a stopped component from the state file.
func (n *Node) forget(name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	keep := n.st.Procs[:0]
	for _, p := range n.st.Procs {
		if p.Name != name {
			keep = append(keep, p)
		}
	}
	n.st.Procs = keep
	return n.st.save()
}

// launch starts a component and records it.
func (n *Node) launch(name, bin string, args []string, env ...string) (*Proc, error) {
	p, err := startProc(n.Dir, name, bin, args, env)
	if err != nil {
		return nil, err
	}
	return p, n.record(p)
}

// Components are the node's processes, in start order, for messages.
func (n *Node) Components() []Proc {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Proc(nil), n.st.Procs...)
}

// Logs are the last lines of every component's log, for a failed test.
func (n *Node) Logs(lines int) string {
	var b strings.Builder
	for _, p := range n.Components() {
		fmt.Fprintf(&b, "--- %s (pid %d, alive %v), %s:\n%s\n", p.Name, p.Pid, p.alive(), p.Log, p.tail(lines))
	}
	return b.String()
}

// Dead names the components that have exited.
func (n *Node) Dead() []string {
	var out []string
	for _, p := range n.Components() {
		if !p.alive() {
			out = append(out, p.Name)
		}
	}
	return out
}

// state is what Start changed on the machine: Down reads it.
type state struct {
	Dir       string            `json:"dir"`
	Started   time.Time         `json:"started"`
	Addr      Addresses         `json:"addresses"`
	ProxyMode string            `json:"proxy_mode"`
	Bins      string            `json:"bins"`
	Procs     []Proc            `json:"procs"`
	Sysctls   map[string]string `json:"sysctls"` // as they were before
	AddedAddr bool              `json:"added_address"`
	Image     string            `json:"image,omitempty"`
	Pause     string            `json:"pause_image,omitempty"`
	// Members are the nodes (none recorded: the one node, by an older
	// build); CNI, Backend, Flanneld, Cilium and KubeProxyReplacement
	// are several nodes' network.
	Members  []Member `json:"members,omitempty"`
	CNI      string   `json:"cni,omitempty"`
	Backend  string   `json:"flannel_backend,omitempty"`
	Flanneld string   `json:"flanneld,omitempty"`
	Cilium   string   `json:"cilium,omitempty"`
	// KubeProxyReplacement: Cilium's, no kube-proxy ran.
	KubeProxyReplacement bool      `json:"kube_proxy_replacement,omitempty"`
	Underlay             *underlay `json:"underlay,omitempty"`
}

// members are the recorded nodes: the one node when none are recorded.
func (s *state) members() []Member {
	if len(s.Members) == 0 {
		return []Member{oneMember(s.Addr)}
	}
	return s.Members
}

func (s *state) cni() string {
	if s.CNI == "" {
		return CNIBridge
	}
	return s.CNI
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func (s *state) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(s.Dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(s.Dir))
}

func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	return &s, nil
}
