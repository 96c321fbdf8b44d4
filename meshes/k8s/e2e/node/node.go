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
	// Log receives progress lines; nil: none.
	Log io.Writer
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

// Start starts a node: whatever an earlier node in the same directory
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
	if err := Down(cfg.Dir, cfg.Log); err != nil {
		return nil, fmt.Errorf("taking down what an earlier node left in %s: %w", cfg.Dir, err)
	}
	if err := checkAddressFree(DefaultAddresses.NodeIP); err != nil {
		return nil, err
	}
	started := time.Now()
	n = &Node{Config: cfg, Addr: DefaultAddresses, paths: pathsOf(cfg.Dir)}
	n.st = &state{Dir: cfg.Dir, Started: started.UTC(), Addr: n.Addr, ProxyMode: cfg.ProxyMode, Bins: cfg.Bins.Dir}
	defer func() {
		if err != nil {
			if derr := Down(cfg.Dir, cfg.Log); derr != nil {
				err = errors.Join(err, fmt.Errorf("and taking it down: %w", derr))
			}
			n = nil
		}
	}()
	if err := n.prepareHost(); err != nil {
		return nil, err
	}
	if n.pki, err = makePKI(cfg.Dir, n.Addr); err != nil {
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
	go func() { images <- n.startContainerd(ctx) }()
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
	if err := n.startKubelet(ctx); err != nil {
		return nil, err
	}
	if err := n.startKubeProxy(ctx, cfg.ProxyMode); err != nil {
		return nil, err
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

// ImportLoadgen puts the loadgen image of bins into the node's containerd
// (a node attached to was started with an older build) and makes it the
// node's Image.
func (n *Node) ImportLoadgen(ctx context.Context, bins *Bins) error {
	im, err := writeImage(n.Dir, LoadgenRepo, bins.Loadgen, "/loadgen", loadgenUser)
	if err != nil {
		return err
	}
	if _, err := run(ctx, "ctr", "--address", n.paths.containerdSock, "-n", "k8s.io", "images", "import", im.archive); err != nil {
		return err
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
	n := &Node{Config: Config{Dir: st.Dir, Bins: &Bins{Dir: st.Bins}, ProxyMode: st.ProxyMode, Log: log},
		Addr: st.Addr, paths: pathsOf(st.Dir), st: st, Image: st.Image, PauseImage: st.Pause,
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
	if err := n.nodeReady(ctx); err != nil {
		return nil, err
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
	cmp, err := n.launch("kube-controller-manager", n.Bins.path("kube-controller-manager"), []string{
		"--kubeconfig", cm, "--authentication-kubeconfig", cm, "--authorization-kubeconfig", cm,
		"--bind-address", n.Addr.NodeIP, "--secure-port", strconv.Itoa(PortControllerMgr),
		"--service-account-private-key-file", n.pki.SAKey, "--root-ca-file", n.pki.CA,
		"--use-service-account-credentials=true", // each controller its own identity, as kubeadm runs it
		"--leader-elect=false", "--controllers", "*,-bootstrapsigner,-tokencleaner",
		"--service-cluster-ip-range", n.Addr.ServiceCIDR,
		"--profiling=false", "--v=1",
	})
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

func (n *Node) startContainerd(ctx context.Context) error {
	n.say("containerd")
	for _, d := range []string{n.paths.containerdRoot, n.paths.containerdState, n.paths.cniConfDir, n.paths.cniIPAM} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	imgs, err := n.Bins.images(n.Dir)
	if err != nil {
		return err
	}
	n.Image, n.PauseImage = imgs.loadgen.ref, imgs.pause.ref
	if err := writeFile(n.paths.containerdConf, []byte(containerdConfig(n.paths, n.PauseImage))); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(n.paths.cniConfDir, "10-loadgen-node.conflist"), []byte(cniConfig(n.paths, n.Addr))); err != nil {
		return err
	}
	// No image is ever pulled: every registry request goes to a proxy on
	// loopback that refuses it, so not even the registry's name is looked
	// up (a pod whose image is missing fails with ErrImagePull at once).
	p, err := n.launch("containerd", "containerd", []string{"--config", n.paths.containerdConf, "--log-level", "warn"}, noPulls...)
	if err != nil {
		return err
	}
	if err := p.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		_, err := run(ctx, "ctr", "--address", n.paths.containerdSock, "version")
		return err
	}); err != nil {
		return err
	}
	for _, im := range []image{imgs.pause, imgs.loadgen} {
		if _, err := run(ctx, "ctr", "--address", n.paths.containerdSock, "-n", "k8s.io", "images", "import", "--no-unpack=false", im.archive); err != nil {
			return p.failure(fmt.Errorf("importing %s: %w", im.ref, err))
		}
	}
	n.say("images %s, %s imported", n.Image, n.PauseImage)
	return nil
}

func (n *Node) startKubelet(ctx context.Context) error {
	n.say("kubelet")
	conf, err := kubeletConfig(n.paths, n.Addr, n.pki.CA)
	if err != nil {
		return err
	}
	if err := writeFile(n.paths.kubeletConf, conf); err != nil {
		return err
	}
	p, err := n.launch("kubelet", n.Bins.path("kubelet"), []string{
		"--config", n.paths.kubeletConf,
		"--kubeconfig", filepath.Join(n.Dir, "kubelet.kubeconfig"),
		"--root-dir", n.paths.kubeletRoot,
		"--cert-dir", filepath.Join(n.paths.kubeletRoot, "pki"),
		"--hostname-override", NodeName,
		"--node-ip", n.Addr.NodeIP,
		"--v=1",
	})
	if err != nil {
		return err
	}
	if err := p.waitFor(ctx, 60*time.Second, httpCheck("http://"+n.hostPort(PortKubeletHealthz)+"/healthz")); err != nil {
		return err
	}
	return p.waitFor(ctx, 60*time.Second, n.nodeReady)
}

// startKubeProxy starts kube-proxy in a mode and waits until it has
// synced its rules.
func (n *Node) startKubeProxy(ctx context.Context, mode string) error {
	n.say("kube-proxy (%s)", mode)
	conf, err := kubeProxyConfig(n.paths, n.Addr, mode, filepath.Join(n.Dir, "kube-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	if err := writeFile(n.paths.kubeProxyConf, conf); err != nil {
		return err
	}
	p, err := n.launch("kube-proxy", n.Bins.path("kube-proxy"), []string{"--config", n.paths.kubeProxyConf, "--v=1"})
	if err != nil {
		return err
	}
	if err := p.waitFor(ctx, 60*time.Second, httpCheck("http://"+n.hostPort(PortKubeProxyHealthz)+"/healthz")); err != nil {
		return err
	}
	return p.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		got, err := n.ProxyModeRunning(ctx)
		if err != nil {
			return err
		}
		if got != mode {
			return fmt.Errorf("kube-proxy runs in %s mode, not %s", got, mode)
		}
		return nil
	})
}

// ProxyModeRunning is the mode kube-proxy says it runs in (/proxyMode).
func (n *Node) ProxyModeRunning(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.hostPort(PortKubeProxyMetrics)+"/proxyMode", nil)
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
	if p := n.proc("kube-proxy"); p != nil && p.alive() && n.ProxyMode == mode {
		return nil
	}
	if p := n.proc("kube-proxy"); p != nil {
		p.stop(10 * time.Second)
		if err := n.forget("kube-proxy"); err != nil {
			return err
		}
	}
	if err := cleanupKubeProxy(ctx, n.Bins.Dir); err != nil {
		return err
	}
	if err := n.startKubeProxy(ctx, mode); err != nil {
		return err
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
	if err := writeFile(n.paths.promConf, []byte(prometheusConfig(n.Addr, n.pki.cert("apiserver-kubelet-client"), n.pki.key("apiserver-kubelet-client")))); err != nil {
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
