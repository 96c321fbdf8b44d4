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
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Log receives progress lines; nil: none.
	Log io.Writer
}

// CNIs the node can run.
const (
	CNIBridge  = "bridge"  // the one node: Debian's bridge plugin on the node's bridge
	CNIFlannel = "flannel" // several nodes: flanneld on each, the bridge plugin as Flannel's CNI plugin delegates to it
)

// Multi tells whether the configuration is of several nodes.
func (c *Config) Multi() bool { return c.Nodes > 1 }

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
	// CNI is CNIBridge (one node) or CNIFlannel (several).
	CNI string

	paths paths
	pki   *pki
	mu    sync.Mutex
	st    *state
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
	if cfg.Multi() {
		if cfg.Backend == "" {
			cfg.Backend = FlannelVXLAN
		}
		if err := checkBackend(cfg.Backend); err != nil {
			return nil, err
		}
		if cfg.Flanneld == "" {
			return nil, errors.New("several nodes run Flannel: call BuildFlannel first")
		}
	} else if cfg.Backend != "" {
		return nil, errors.New("a Flannel backend is for several nodes (Nodes 2 or more): the one node runs the bridge plugin")
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
	addr, members, cni := DefaultAddresses, []Member{oneMember(DefaultAddresses)}, CNIBridge
	if cfg.Multi() {
		addr, members, cni = MultiAddresses, multiMembers(cfg.Nodes), CNIFlannel
	}
	if err := checkAddressFree(addr.NodeIP); err != nil {
		return nil, err
	}
	started := time.Now()
	n = &Node{Config: cfg, Addr: addr, Members: members, CNI: cni, paths: pathsOf(cfg.Dir)}
	n.st = &state{Dir: cfg.Dir, Started: started.UTC(), Addr: n.Addr, ProxyMode: cfg.ProxyMode, Bins: cfg.Bins.Dir,
		CNI: cni, Backend: cfg.Backend, Flanneld: cfg.Flanneld}
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
	if n.pki, err = makePKI(cfg.Dir, n.Addr, n.memberNames()); err != nil {
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
	if n.CNI == CNIFlannel {
		if err := n.startFlannel(ctx); err != nil {
			return nil, err
		}
	}
	for _, m := range n.Members {
		if err := n.waitReady(ctx, m); err != nil {
			return nil, err
		}
	}
	for _, m := range n.Members {
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
	im, err := writeImage(n.Dir, LoadgenRepo, bins.Loadgen, "/loadgen", loadgenUser)
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
		Nodes: len(st.members()), Backend: st.Backend, Flanneld: st.Flanneld},
		Addr: st.Addr, paths: pathsOf(st.Dir), st: st, Image: st.Image, PauseImage: st.Pause,
		Members: st.members(), CNI: st.cni(),
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

func (n *Node) hostPort(port int) string { return net.JoinHostPort(n.Addr.NodeIP, strconv.Itoa(port)) }

// httpCheck is a readiness check: GET url answers 200. TLS is not
// verified (a component's own self-signed certificate).
func httpCheck(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := insecureClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
		}
		return nil
	}
}

func (n *Node) startEtcd(ctx context.Context) error {
	n.say("etcd")
	u := "http://" + n.hostPort(PortEtcd)
	peer := "http://" + n.hostPort(PortEtcdPeer)
	p, err := n.launch("etcd", n.Bins.path("etcd"), []string{
		"--name", "default", "--data-dir", n.paths.etcdData,
		"--listen-client-urls", u, "--advertise-client-urls", u,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default=" + peer,
		"--listen-metrics-urls", "", "--unsafe-no-fsync", "--log-level", "warn",
	})
	if err != nil {
		return err
	}
	return p.waitFor(ctx, 30*time.Second, httpCheck(u+"/health"))
}

func (n *Node) startAPIServer(ctx context.Context) error {
	n.say("kube-apiserver")
	k := n.pki
	p, err := n.launch("kube-apiserver", n.Bins.path("kube-apiserver"), []string{
		"--etcd-servers", "http://" + n.hostPort(PortEtcd),
		"--bind-address", n.Addr.NodeIP, "--advertise-address", n.Addr.NodeIP,
		"--secure-port", strconv.Itoa(PortAPIServer),
		"--service-cluster-ip-range", n.Addr.ServiceCIDR,
		"--tls-cert-file", k.APIServer, "--tls-private-key-file", k.APIServerKey,
		"--client-ca-file", k.CA,
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", k.SAPub, "--service-account-signing-key-file", k.SAKey,
		"--kubelet-client-certificate", k.cert("apiserver-kubelet-client"),
		"--kubelet-client-key", k.key("apiserver-kubelet-client"),
		"--kubelet-preferred-address-types", "InternalIP",
		"--authorization-mode", "Node,RBAC",
		"--enable-admission-plugins", "NodeRestriction",
		"--allow-privileged=true",
		"--requestheader-client-ca-file", k.FrontProxyCA,
		"--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", k.FrontProxy, "--proxy-client-key-file", k.FrontProxyKey,
		"--enable-aggregator-routing=true",
		"--profiling=false",
		"--v=1",
	})
	if err != nil {
		return err
	}
	return p.waitFor(ctx, 90*time.Second, httpCheck("https://"+n.hostPort(PortAPIServer)+"/readyz"))
}

func (n *Node) startControllers(ctx context.Context) error {
	n.say("kube-controller-manager, kube-scheduler")
	cm := filepath.Join(n.Dir, "controller-manager.kubeconfig")
	args := []string{
		"--kubeconfig", cm, "--authentication-kubeconfig", cm, "--authorization-kubeconfig", cm,
		"--bind-address", n.Addr.NodeIP, "--secure-port", strconv.Itoa(PortControllerMgr),
		"--service-account-private-key-file", n.pki.SAKey, "--root-ca-file", n.pki.CA,
		"--use-service-account-credentials=true", // each controller its own identity, as kubeadm runs it
		"--leader-elect=false", "--controllers", "*,-bootstrapsigner,-tokencleaner",
		"--service-cluster-ip-range", n.Addr.ServiceCIDR,
		"--profiling=false", "--v=1",
	}
	if n.CNI == CNIFlannel {
		// Flannel's kube subnet manager takes each node's subnet from its
		// spec.podCIDR, which the controller manager allocates.
		args = append(args, "--allocate-node-cidrs=true", "--cluster-cidr", n.Addr.PodCIDR, "--node-cidr-mask-size", "24")
	}
	cmp, err := n.launch("kube-controller-manager", n.Bins.path("kube-controller-manager"), args)
	if err != nil {
		return err
	}
	sc := filepath.Join(n.Dir, "scheduler.kubeconfig")
	sp, err := n.launch("kube-scheduler", n.Bins.path("kube-scheduler"), []string{
		"--kubeconfig", sc, "--authentication-kubeconfig", sc, "--authorization-kubeconfig", sc,
		"--bind-address", n.Addr.NodeIP, "--secure-port", strconv.Itoa(PortScheduler),
		"--leader-elect=false", "--profiling=false", "--v=1",
	})
	if err != nil {
		return err
	}
	if err := cmp.waitFor(ctx, 60*time.Second, httpCheck("https://"+n.hostPort(PortControllerMgr)+"/healthz")); err != nil {
		return err
	}
	return sp.waitFor(ctx, 60*time.Second, httpCheck("https://"+n.hostPort(PortScheduler)+"/healthz"))
}

// startContainerds writes the images and starts every node's containerd
// with them imported, the nodes at once.
func (n *Node) startContainerds(ctx context.Context) error {
	imgs, err := n.Bins.images(n.Dir)
	if err != nil {
		return err
	}
	n.Image, n.PauseImage = imgs.loadgen.ref, imgs.pause.ref
	errs := make(chan error, len(n.Members))
	for _, m := range n.Members {
		go func() { errs <- n.startContainerd(ctx, m, imgs) }()
	}
	var all []error
	for range n.Members {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

func (n *Node) startContainerd(ctx context.Context, m Member, imgs nodeImages) error {
	n.say("containerd%s", n.on(m))
	p := n.mpaths(m)
	for _, d := range []string{p.containerdRoot, p.containerdState, p.cniConfDir, p.cniIPAM} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	runcRoot := ""
	if m.Netns != "" {
		runcRoot = filepath.Join(p.dir, "runc")
	}
	if err := writeFile(p.containerdConf, []byte(containerdConfig(p, n.PauseImage, runcRoot))); err != nil {
		return err
	}
	if n.CNI == CNIBridge {
		if err := writeFile(filepath.Join(p.cniConfDir, "10-loadgen-node.conflist"), []byte(cniConfig(p, n.Addr))); err != nil {
			return err
		}
	}
	// No image is ever pulled: every registry request goes to a proxy on
	// loopback that refuses it, so not even the registry's name is looked
	// up (a pod whose image is missing fails with ErrImagePull at once).
	bin, args := m.inNetns("containerd", "--config", p.containerdConf, "--log-level", "warn")
	pr, err := n.launch(procName("containerd", m), bin, args, noPulls...)
	if err != nil {
		return err
	}
	if err := pr.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		_, err := run(ctx, "ctr", "--address", p.containerdSock, "version")
		return err
	}); err != nil {
		return err
	}
	for _, im := range []image{imgs.pause, imgs.loadgen} {
		if _, err := run(ctx, "ctr", "--address", p.containerdSock, "-n", "k8s.io", "images", "import", "--no-unpack=false", im.archive); err != nil {
			return pr.failure(fmt.Errorf("importing %s: %w", im.ref, err))
		}
	}
	n.say("images %s, %s imported%s", n.Image, n.PauseImage, n.on(m))
	return nil
}

// on names a member in progress lines, when there are several.
func (n *Node) on(m Member) string {
	if m.Netns == "" {
		return ""
	}
	return " on " + m.Name
}

func (n *Node) startKubelet(ctx context.Context, m Member) error {
	n.say("kubelet%s", n.on(m))
	p := n.mpaths(m)
	conf, err := kubeletConfig(p, n.Addr, m, n.pki.CA)
	if err != nil {
		return err
	}
	if err := writeFile(p.kubeletConf, conf); err != nil {
		return err
	}
	bin, args := m.inNetns(n.Bins.path("kubelet"),
		"--config", p.kubeletConf,
		"--kubeconfig", filepath.Join(n.Dir, kubeletUser(m)+".kubeconfig"),
		"--root-dir", p.kubeletRoot,
		"--cert-dir", filepath.Join(p.kubeletRoot, "pki"),
		"--hostname-override", m.Name,
		"--node-ip", m.IP,
		"--v=1",
	)
	pr, err := n.launch(procName("kubelet", m), bin, args)
	if err != nil {
		return err
	}
	if err := pr.waitFor(ctx, 60*time.Second, httpCheck("http://"+net.JoinHostPort(m.IP, strconv.Itoa(PortKubeletHealthz))+"/healthz")); err != nil {
		return err
	}
	if n.CNI == CNIFlannel {
		// Registered: Ready waits for the pod network, which Flannel
		// makes from the node's podCIDR.
		return pr.waitFor(ctx, 60*time.Second, func(ctx context.Context) error {
			nd, err := n.Client.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if nd.Spec.PodCIDR == "" {
				return fmt.Errorf("node %s has no podCIDR yet", m.Name)
			}
			return nil
		})
	}
	return pr.waitFor(ctx, 60*time.Second, n.nodeReady(m.Name))
}

// waitReady waits for a member to be Ready.
func (n *Node) waitReady(ctx context.Context, m Member) error {
	p := n.proc(procName("kubelet", m))
	if p == nil {
		return fmt.Errorf("no kubelet on %s", m.Name)
	}
	return p.waitFor(ctx, 90*time.Second, n.nodeReady(m.Name))
}

// startKubeProxy starts kube-proxy in a mode and waits until it has
// synced its rules.
func (n *Node) startKubeProxy(ctx context.Context, m Member, mode string) error {
	n.say("kube-proxy (%s)%s", mode, n.on(m))
	p := n.mpaths(m)
	conf, err := kubeProxyConfig(p, n.Addr, m, mode, filepath.Join(n.Dir, "kube-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	if err := writeFile(p.kubeProxyConf, conf); err != nil {
		return err
	}
	bin, args := m.inNetns(n.Bins.path("kube-proxy"), "--config", p.kubeProxyConf, "--v=1")
	pr, err := n.launch(procName("kube-proxy", m), bin, args)
	if err != nil {
		return err
	}
	if err := pr.waitFor(ctx, 60*time.Second, httpCheck("http://"+net.JoinHostPort(m.IP, strconv.Itoa(PortKubeProxyHealthz))+"/healthz")); err != nil {
		return err
	}
	return pr.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		got, err := n.proxyModeOf(ctx, m)
		if err != nil {
			return err
		}
		if got != mode {
			return fmt.Errorf("kube-proxy runs in %s mode, not %s", got, mode)
		}
		return nil
	})
}

// ProxyModeRunning is the mode kube-proxy says it runs in (/proxyMode):
// the first node's, the same on every node unless one says otherwise.
func (n *Node) ProxyModeRunning(ctx context.Context) (string, error) {
	var first string
	for i, m := range n.Members {
		got, err := n.proxyModeOf(ctx, m)
		if err != nil {
			return "", err
		}
		if i == 0 {
			first = got
		} else if got != first {
			return "", fmt.Errorf("kube-proxy runs in %s mode on %s, %s on %s", first, n.Members[0].Name, got, m.Name)
		}
	}
	return first, nil
}

func (n *Node) proxyModeOf(ctx context.Context, m Member) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(m.IP, strconv.Itoa(PortKubeProxyMetrics))+"/proxyMode", nil)
	if err != nil {
		return "", err
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	return strings.TrimSpace(string(b)), err
}

// SetProxyMode restarts kube-proxy in another mode, its old rules cleaned
// up first (kube-proxy --cleanup), as an operator switching modes does.
func (n *Node) SetProxyMode(ctx context.Context, mode string) error {
	if mode != ProxyIPTables && mode != ProxyNFTables {
		return fmt.Errorf("kube-proxy mode %q: want %s or %s", mode, ProxyIPTables, ProxyNFTables)
	}
	running := true
	for _, m := range n.Members {
		if p := n.proc(procName("kube-proxy", m)); p == nil || !p.alive() {
			running = false
		}
	}
	if running && n.ProxyMode == mode {
		return nil
	}
	for _, m := range n.Members {
		if p := n.proc(procName("kube-proxy", m)); p != nil {
			p.stop(10 * time.Second)
			if err := n.forget(p.Name); err != nil {
				return err
			}
		}
		if err := cleanupKubeProxy(ctx, n.Bins.Dir, m); err != nil {
			return err
		}
	}
	for _, m := range n.Members {
		if err := n.startKubeProxy(ctx, m, mode); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.st.ProxyMode = mode
	err := n.st.save()
	n.mu.Unlock()
	n.ProxyMode = mode
	return err
}

func (n *Node) startAddons(ctx context.Context) error {
	n.say("CoreDNS, metrics-server, Prometheus")
	admin := n.Kubeconfig
	if err := writeFile(n.paths.corefile, []byte(corefile(n.Addr, admin))); err != nil {
		return err
	}
	dns, err := n.launch("coredns", n.Bins.path("coredns"), []string{"-conf", n.paths.corefile})
	if err != nil {
		return err
	}
	ms, err := n.launch("metrics-server", n.Bins.path("metrics-server"), []string{
		"--kubeconfig", admin, "--authentication-kubeconfig", admin, "--authorization-kubeconfig", admin,
		"--secure-port", strconv.Itoa(PortMetricsServer), "--bind-address", n.Addr.NodeIP,
		"--cert-dir", n.paths.metricsServerCertDir,
		"--kubelet-insecure-tls", "--kubelet-preferred-address-types", "InternalIP",
		"--metric-resolution", MetricsResolution.String(),
	})
	if err != nil {
		return err
	}
	if err := writeFile(n.paths.promConf, []byte(prometheusConfig(n.Members, n.pki.cert("apiserver-kubelet-client"), n.pki.key("apiserver-kubelet-client")))); err != nil {
		return err
	}
	n.PrometheusURL = "http://" + n.hostPort(PortPrometheus)
	prom, err := n.launch("prometheus", "prometheus", []string{
		"--config.file", n.paths.promConf, "--storage.tsdb.path", n.paths.promData,
		"--web.listen-address", n.hostPort(PortPrometheus), "--log.level", "warn",
	})
	if err != nil {
		return err
	}
	if err := dns.waitFor(ctx, 30*time.Second, httpCheck("http://"+n.hostPort(PortCoreDNSReady)+"/ready")); err != nil {
		return err
	}
	if err := prom.waitFor(ctx, 30*time.Second, httpCheck(n.PrometheusURL+"/-/ready")); err != nil {
		return err
	}
	return ms.waitFor(ctx, 60*time.Second, httpCheck("https://"+n.hostPort(PortMetricsServer)+"/readyz"))
}

// noPulls is containerd's environment: a proxy for every registry that
// refuses (127.0.0.1:1), but for loopback itself.
var noPulls = []string{"HTTP_PROXY=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1", "NO_PROXY=127.0.0.1,localhost",
	"http_proxy=http://127.0.0.1:1", "https_proxy=http://127.0.0.1:1", "no_proxy=127.0.0.1,localhost"}

// MetricsResolution is metrics-server's --metric-resolution: how often it
// scrapes the kubelet (its default, 15 s).
const MetricsResolution = 15 * time.Second

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
	// build); CNI, Backend and Flanneld are several nodes' network.
	Members  []Member  `json:"members,omitempty"`
	CNI      string    `json:"cni,omitempty"`
	Backend  string    `json:"flannel_backend,omitempty"`
	Flanneld string    `json:"flanneld,omitempty"`
	Underlay *underlay `json:"underlay,omitempty"`
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
