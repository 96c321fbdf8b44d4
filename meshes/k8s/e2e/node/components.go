package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The control plane's, the runtimes' and the kubelets' start, each
// waited for until it answers.

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
	if n.Multi() {
		// Flannel's kube subnet manager and the Macvlan network take each
		// node's subnet from its spec.podCIDR, which the controller
		// manager allocates.
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
	if n.CNI == CNICilium {
		if err := makeCNIBinDir(n.Dir, n.Cilium); err != nil {
			return err
		}
	}
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
	cniBin, env := containerdCNI(n.Dir, n.CNI, p, m)
	if err := writeFile(p.containerdConf, []byte(containerdConfig(p, n.PauseImage, runcRoot, cniBin))); err != nil {
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
	pr, err := n.launch(procName("containerd", m), bin, args, env...)
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

// containerdCNI are a member's containerd's CNI plugins' directory and
// environment: Debian's directory and noPulls; under Cilium its own
// directory (cniBinDir) and its agent's socket for cilium-cni (containerd
// passes its environment to the plugins).
func containerdCNI(dir, cni string, p paths, m Member) (string, []string) {
	if cni != CNICilium {
		return CNIBinDir, noPulls
	}
	return cniBinDir(dir), append(slices.Clone(noPulls), "CILIUM_SOCK="+ciliumDirsOf(p, m).sock)
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
	if n.Multi() {
		// Registered: Ready waits for the pod network, which Flannel (or
		// the Macvlan network) makes from the node's podCIDR.
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
