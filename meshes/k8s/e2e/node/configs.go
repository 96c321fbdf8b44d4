package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The node's configuration files, each a function of the state directory
// and the addresses: containerd's, the CNI network's, the kubelet's,
// kube-proxy's, CoreDNS's and Prometheus'.

// paths are where the node keeps each part under its state directory.
type paths struct {
	dir                  string
	containerdRoot       string
	containerdState      string
	containerdSock       string
	containerdConf       string
	cniConfDir, cniIPAM  string
	kubeletRoot          string
	kubeletConf          string
	kubeProxyConf        string
	etcdData             string
	corefile             string
	promConf, promData   string
	metricsServerCertDir string
}

func pathsOf(dir string) paths {
	return paths{
		dir:                  dir,
		containerdRoot:       filepath.Join(dir, "containerd", "root"),
		containerdState:      filepath.Join(dir, "containerd", "state"),
		containerdSock:       filepath.Join(dir, "containerd", "containerd.sock"),
		containerdConf:       filepath.Join(dir, "containerd", "config.toml"),
		cniConfDir:           filepath.Join(dir, "cni", "net.d"),
		cniIPAM:              filepath.Join(dir, "cni", "ipam"),
		kubeletRoot:          filepath.Join(dir, "kubelet"),
		kubeletConf:          filepath.Join(dir, "kubelet-config.yaml"),
		kubeProxyConf:        filepath.Join(dir, "kube-proxy-config.yaml"),
		etcdData:             filepath.Join(dir, "etcd"),
		corefile:             filepath.Join(dir, "Corefile"),
		promConf:             filepath.Join(dir, "prometheus.yml"),
		promData:             filepath.Join(dir, "prometheus"),
		metricsServerCertDir: filepath.Join(dir, "metrics-server"),
	}
}

// containerdConfig is the config of a containerd with its own root, state
// and socket, the CRI plugin on the node's CNI network and sandbox image,
// cgroupfs, and the one setting this VM needs (no CAP_SYS_RESOURCE: runc
// may not raise oom_score_adj). runcRoot, when set, is runc's state
// directory (each of several nodes its own; the one node runc's default).
// cniBin is the CNI plugins' directory. The pods' network namespaces are
// pinned under containerd's state directory, the node's own, not in the
// host's /run/netns: Down takes down what is under the node's directory,
// and no other cluster's pods (a one-node cluster and two nodes may run at
// once: when their teardown told its pods' namespaces by time, two nodes
// going down unmounted the one node's newer pods' namespaces, and its
// kubelet killed those pods); Cilium's agent enters those it finds there
// (cilium.go).
func containerdConfig(p paths, sandboxImage, runcRoot, cniBin string) string {
	runc := ""
	if runcRoot != "" {
		runc = fmt.Sprintf("        Root = %q\n", runcRoot)
	}
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.grpc.v1.cri.v1alpha2"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
%[9]s
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
    max_conf_num = 1
`, p.containerdRoot, p.containerdState, p.containerdSock, p.containerdSock+".ttrpc",
		filepath.Join(p.dir, "containerd", "opt"), sandboxImage, cniBin, p.cniConfDir, runc)
}

// CNIBinDir is where Debian's containernetworking-plugins puts the plugins.
const CNIBinDir = "/usr/lib/cni"

// cniConfig is the pod network: Debian's bridge plugin on the node's own
// bridge, host-local addresses from the pod range, portmap for hostPort.
// Pods get routes to the node's address and the Services only (their own
// subnet is on the bridge): there is no default route, so nothing a pod
// sends can leave the machine, nor reach the lab's addresses.
func cniConfig(p paths, a Addresses) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "loadgen-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": %q}, {"dst": %q}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, a.Bridge, p.cniIPAM, a.PodCIDR, a.PodGateway, a.NodeIP+"/32", a.ServiceCIDR)
}

// kubeletConfig is the KubeletConfiguration: cgroup v1 allowed (kubelet
// 1.35 refuses it otherwise), cgroupfs under a cgroup root of the node's
// own, no swap check, webhook authentication and authorization against
// the API server, cluster DNS, and image garbage collection off (the
// images are imported, never pulled again). Each of several nodes keeps
// its pods' logs in a directory of its own: a kubelet removes the log
// directories of pods it does not know, which in a shared /var/log/pods
// are the other node's.
func kubeletConfig(p paths, a Addresses, m Member, caFile string) ([]byte, error) {
	c := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"address":                     m.IP,
		"port":                        PortKubelet,
		"readOnlyPort":                0,
		"healthzBindAddress":          m.IP,
		"healthzPort":                 PortKubeletHealthz,
		"containerRuntimeEndpoint":    "unix://" + p.containerdSock,
		"cgroupDriver":                "cgroupfs",
		"cgroupRoot":                  "/" + m.CgroupRoot,
		"failCgroupV1":                false,
		"failSwapOn":                  false,
		"clusterDomain":               "cluster.local",
		"clusterDNS":                  []string{a.DNSServiceIP},
		"resolvConf":                  "",
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard":                map[string]string{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		"serializeImagePulls":         false,
		"staticPodPath":               "",
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": caFile},
		},
		"authorization":             map[string]any{"mode": "Webhook"},
		"enforceNodeAllocatable":    []string{"pods"},
		"shutdownGracePeriod":       "0s",
		"nodeStatusReportFrequency": "10s",
	}
	if m.Netns != "" {
		c["podLogsDir"] = filepath.Join(p.dir, "pod-logs")
	}
	return yaml.Marshal(c)
}

// kubeProxyConfig is the KubeProxyConfiguration in one mode (iptables or
// nftables), leaving the machine's conntrack table size alone. With
// masqueradeAll (the Macvlan network), every packet to a Service is
// SNATed to the node: "This may be required with some CNI plugins"
// (KubeProxyIPTablesConfiguration.masqueradeAll) — a macvlan pod would
// otherwise answer the client pod straight over the underlay, from its
// own address, not the Service's.
func kubeProxyConfig(p paths, a Addresses, m Member, mode, kubeconfig string, masqueradeAll bool) ([]byte, error) {
	c := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               mode,
		"clusterCIDR":        a.PodCIDR,
		"bindAddress":        m.IP,
		"healthzBindAddress": fmt.Sprintf("%s:%d", m.IP, PortKubeProxyHealthz),
		"metricsBindAddress": fmt.Sprintf("%s:%d", m.IP, PortKubeProxyMetrics),
		"hostnameOverride":   m.Name,
		"clientConnection":   map[string]any{"kubeconfig": kubeconfig},
		"conntrack":          map[string]any{"maxPerCore": 0, "min": 0},
		"nodePortAddresses":  []string{m.IP + "/32"},
	}
	if masqueradeAll {
		c[mode] = map[string]any{"masqueradeAll": true}
	}
	return yaml.Marshal(c)
}

// corefile serves cluster.local from the API server, and nothing else:
// no forward plugin, so no query leaves the node.
func corefile(a Addresses, kubeconfig string) string {
	return fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    health %[1]s:%[2]d
    ready %[1]s:%[3]d
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %[4]s %[5]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`, a.NodeIP, PortCoreDNSHealth, PortCoreDNSReady, kubeconfig, ContextName)
}

// PromScrapeInterval is how often Prometheus scrapes the kubelet.
const PromScrapeInterval = "2s"

// prometheusConfig scrapes the kubelets' cAdvisor and resource metrics,
// as a cluster's Prometheus does (kube-prometheus' kubelet jobs).
func prometheusConfig(members []Member, certFile, keyFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: 15s\nscrape_configs:\n", PromScrapeInterval)
	for _, job := range []struct{ name, path string }{{"kubelet-cadvisor", "/metrics/cadvisor"}, {"kubelet-resource", "/metrics/resource"}} {
		fmt.Fprintf(&b, `  - job_name: %s
    scheme: https
    metrics_path: %s
    tls_config:
      cert_file: %s
      key_file: %s
      insecure_skip_verify: true
    static_configs:
`, job.name, job.path, certFile, keyFile)
		for _, m := range members {
			fmt.Fprintf(&b, "      - targets: [\"%s:%d\"]\n        labels: {node: %s}\n", m.IP, PortKubelet, m.Name)
		}
	}
	return b.String()
}

// writeFile writes a file only when its content changed: kube-proxy exits
// when its config file is rewritten under it.
func writeFile(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
