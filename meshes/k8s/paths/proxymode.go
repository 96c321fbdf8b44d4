package paths

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"loadgen/meshes/k8s/cluster"
)

// ProxyMode is the kube-proxy mode a run measured under, and where it
// was read.
type ProxyMode struct {
	Mode   string `json:"mode"`   // iptables, nftables, ipvs, …; "unknown" when it could not be read
	Source string `json:"source"` // where Mode was read; empty when unknown
	Node   string `json:"node,omitempty"`
	Why    string `json:"why,omitempty"` // unknown: why each source failed
}

// ProxyModeUnknown is the mode of a run whose kube-proxy mode no source told.
const ProxyModeUnknown = "unknown"

// kubeProxyMetricsPort is where kube-proxy serves /proxyMode (its
// metricsBindAddress).
const kubeProxyMetricsPort = "10249"

var modeWord = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// KubeProxyMode reads the mode kube-proxy runs in on node: first what
// kube-proxy itself says (/proxyMode, through the API server's node proxy:
// it answers when kube-proxy's metrics bind where the API server reaches
// them), else the mode: field of kubeadm's ConfigMap kube-system/kube-proxy
// (config.conf; empty is iptables, kube-proxy's default on Linux), else
// unknown, saying why.
func KubeProxyMode(ctx context.Context, c *cluster.Cluster, node string) ProxyMode {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ask := func() ([]byte, error) {
		return c.Client.CoreV1().RESTClient().Get().Resource("nodes").Name(node + ":" + kubeProxyMetricsPort).
			SubResource("proxy").Suffix("proxyMode").DoRaw(ctx)
	}
	return proxyMode(ctx, c.Client, node, ask)
}

// proxyMode reads the mode from ask (kube-proxy's /proxyMode), else from
// the ConfigMap.
func proxyMode(ctx context.Context, client kubernetes.Interface, node string, ask func() ([]byte, error)) ProxyMode {
	path := "/api/v1/nodes/" + node + ":" + kubeProxyMetricsPort + "/proxy/proxyMode"
	var whys []string
	if b, err := ask(); err == nil {
		if m := strings.TrimSpace(string(b)); modeWord.MatchString(m) {
			return ProxyMode{Mode: m, Source: "kube-proxy: GET " + path, Node: node}
		}
		whys = append(whys, fmt.Sprintf("GET %s answered %q, not a mode", path, clip(string(b), 40)))
	} else {
		whys = append(whys, fmt.Sprintf("GET %s: %v", path, cluster.OneLine(err)))
	}
	const cmRef = "ConfigMap kube-system/kube-proxy"
	cm, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
	if err != nil {
		whys = append(whys, cmRef+": "+cluster.OneLine(err))
		return ProxyMode{Mode: ProxyModeUnknown, Node: node, Why: strings.Join(whys, "; ")}
	}
	conf, ok := cm.Data["config.conf"]
	if !ok {
		whys = append(whys, cmRef+" has no config.conf")
		return ProxyMode{Mode: ProxyModeUnknown, Node: node, Why: strings.Join(whys, "; ")}
	}
	m, err := modeOfConfig(conf)
	if err != nil {
		whys = append(whys, cmRef+" config.conf: "+err.Error())
		return ProxyMode{Mode: ProxyModeUnknown, Node: node, Why: strings.Join(whys, "; ")}
	}
	if m == "" {
		return ProxyMode{Mode: "iptables", Source: cmRef + " (config.conf mode empty: kube-proxy's default on Linux, iptables)"}
	}
	return ProxyMode{Mode: m, Source: cmRef + " (config.conf mode: " + m + ")"}
}

// modeOfConfig is the mode: field of a KubeProxyConfiguration.
func modeOfConfig(conf string) (string, error) {
	var kc struct {
		Kind string `json:"kind"`
		Mode string `json:"mode"`
	}
	if err := yaml.Unmarshal([]byte(conf), &kc); err != nil {
		return "", fmt.Errorf("not YAML: %v", cluster.OneLine(err))
	}
	if kc.Kind != "KubeProxyConfiguration" {
		return "", fmt.Errorf("kind %q, want KubeProxyConfiguration", kc.Kind)
	}
	if kc.Mode != "" && !modeWord.MatchString(kc.Mode) {
		return "", fmt.Errorf("mode %q is not a mode", clip(kc.Mode, 40))
	}
	return kc.Mode, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
