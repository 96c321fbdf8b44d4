package paths

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
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

// ProxyModeReplaced is the mode of a cluster whose Services a kube-proxy
// replacement serves (Cilium's), not kube-proxy.
const ProxyModeReplaced = "replaced"

// ciliumConfig is Cilium's ConfigMap and the key of its kube-proxy
// replacement: "true" since v1.14 ("strict" before; "false", "partial",
// "probe" and "disabled" leave kube-proxy serving the Services).
var ciliumConfig = struct{ name, key string }{"cilium-config", "kube-proxy-replacement"}

// The kube-proxy configurations a cluster publishes in kube-system:
// kubeadm's ConfigMap kube-proxy (key config.conf) and Amazon EKS's
// kube-proxy-config (key config; AWS: "Edit the kube-proxy-config
// configmap: kubectl edit cm kube-proxy-config -n kube-system … change the
// mode parameter").
var kubeProxyConfigMaps = []struct{ name, key string }{{"kube-proxy", "config.conf"}, {"kube-proxy-config", "config"}}

// KubeProxyPodSelector is kube-proxy's DaemonSet's pod label (kubeadm's,
// EKS's).
const KubeProxyPodSelector = "k8s-app=kube-proxy"

var modeWord = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// KubeProxyMode reads the mode kube-proxy runs in, from what the cluster
// publishes in kube-system and nothing of the nodes' own (the kubelet's
// API through the API server's node proxy is a right a load test should
// not ask for): kubeadm's ConfigMap kube-proxy or EKS's
// kube-proxy-config (a KubeProxyConfiguration's mode:, empty being
// iptables, kube-proxy's default on Linux), else the --proxy-mode flag of
// the kube-proxy pods, else unknown, saying why.
func KubeProxyMode(ctx context.Context, c *cluster.Cluster, node string) ProxyMode {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m := proxyMode(ctx, c.Client)
	m.Node = node
	return m
}

func proxyMode(ctx context.Context, client kubernetes.Interface) ProxyMode {
	var whys []string
	// Cilium's replacement first: it serves the Services before any rule
	// a kube-proxy left (or still runs) could.
	if cm, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, ciliumConfig.name, metav1.GetOptions{}); err == nil {
		if v := strings.TrimSpace(cm.Data[ciliumConfig.key]); v == "true" || v == "strict" {
			return ProxyMode{Mode: ProxyModeReplaced, Source: fmt.Sprintf("ConfigMap kube-system/%s (%s: %s): Cilium's kube-proxy replacement serves the Services, in eBPF", ciliumConfig.name, ciliumConfig.key, v)}
		}
	}
	for _, src := range kubeProxyConfigMaps {
		ref := "ConfigMap kube-system/" + src.name
		cm, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, src.name, metav1.GetOptions{})
		if err != nil {
			whys = append(whys, ref+": "+cluster.OneLine(err))
			continue
		}
		conf, ok := cm.Data[src.key]
		if !ok {
			whys = append(whys, fmt.Sprintf("%s has no %s", ref, src.key))
			continue
		}
		m, err := modeOfConfig(conf)
		if err != nil {
			whys = append(whys, ref+" "+src.key+": "+err.Error())
			continue
		}
		if m == "" {
			return ProxyMode{Mode: "iptables", Source: fmt.Sprintf("%s (%s mode empty: kube-proxy's default on Linux, iptables)", ref, src.key)}
		}
		return ProxyMode{Mode: m, Source: fmt.Sprintf("%s (%s mode: %s)", ref, src.key, m)}
	}
	pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: KubeProxyPodSelector})
	if err != nil {
		whys = append(whys, "kube-proxy pods: "+cluster.OneLine(err))
		return ProxyMode{Mode: ProxyModeUnknown, Why: strings.Join(whys, "; ")}
	}
	modes := map[string]bool{}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			args := append(slices.Clone(c.Command), c.Args...)
			for i, a := range args {
				v, ok := strings.CutPrefix(a, "--proxy-mode=")
				if !ok && a == "--proxy-mode" && i+1 < len(args) {
					v, ok = args[i+1], true
				}
				if ok && modeWord.MatchString(v) {
					modes[v] = true
				}
			}
		}
	}
	switch len(modes) {
	case 1:
		for m := range modes {
			return ProxyMode{Mode: m, Source: fmt.Sprintf("kube-system pods %s (--proxy-mode=%s)", KubeProxyPodSelector, m)}
		}
	case 0:
		whys = append(whys, fmt.Sprintf("%d kube-system pods %s, none with --proxy-mode", len(pods.Items), KubeProxyPodSelector))
	default:
		var l []string
		for m := range modes {
			l = append(l, m)
		}
		sort.Strings(l)
		whys = append(whys, "the kube-proxy pods run several modes: "+strings.Join(l, ", "))
	}
	return ProxyMode{Mode: ProxyModeUnknown, Why: strings.Join(whys, "; ")}
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
