package paths

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestProxyMode checks that the mode is read from what the cluster publishes
// in kube-system — kubeadm's ConfigMap kube-proxy (config.conf), Amazon
// EKS's kube-proxy-config (config; AWS re:Post "How do I configure ipvs
// kube-proxy mode in Amazon EKS?": "Edit the kube-proxy-config configmap
// … change the mode parameter from iptables to ipvs"), the kube-proxy
// pods' --proxy-mode — and never through the API server's node proxy
// (nodes/proxy, the kubelet's API), which no action of the fake client
// may touch.
func TestProxyMode(t *testing.T) {
	cm := func(name, key, conf string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: map[string]string{key: conf}}
	}
	pod := func(args ...string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-x", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-proxy"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-proxy", Command: append([]string{"kube-proxy"}, args...)}}}}
	}
	for _, tc := range []struct {
		name     string
		objs     []runtime.Object
		mode     string
		source   string // a part of it
		whyParts []string
	}{
		{"kubeadm ipvs", []runtime.Object{cm("kube-proxy", "config.conf", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n")},
			"ipvs", "ConfigMap kube-system/kube-proxy (config.conf mode: ipvs)", nil},
		{"kubeadm empty mode", []runtime.Object{cm("kube-proxy", "config.conf", "kind: KubeProxyConfiguration\nmode: \"\"\n")}, "iptables", "mode empty", nil},
		{"EKS", []runtime.Object{cm("kube-proxy-config", "config", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"ipvs\"\n")},
			"ipvs", "ConfigMap kube-system/kube-proxy-config (config mode: ipvs)", nil},
		{"the pods' flag", []runtime.Object{pod("--proxy-mode=nftables", "--v=2")}, "nftables", "--proxy-mode=nftables", nil},
		// Cilium's documented ConfigMap key (helm kubeProxyReplacement=true;
		// "strict" before v1.14), whatever kube-proxy left behind.
		{"cilium kube-proxy replacement", []runtime.Object{cm("cilium-config", "kube-proxy-replacement", "true"), cm("kube-proxy", "config.conf", "kind: KubeProxyConfiguration\nmode: iptables\n")},
			ProxyModeReplaced, "ConfigMap kube-system/cilium-config (kube-proxy-replacement: true): Cilium's kube-proxy replacement", nil},
		{"cilium strict", []runtime.Object{cm("cilium-config", "kube-proxy-replacement", "strict")}, ProxyModeReplaced, "kube-proxy-replacement: strict", nil},
		{"cilium beside kube-proxy", []runtime.Object{cm("cilium-config", "kube-proxy-replacement", "false"), pod("--proxy-mode=ipvs")}, "ipvs", "--proxy-mode=ipvs", nil},
		{"neither", nil, ProxyModeUnknown, "", []string{"ConfigMap kube-system/kube-proxy: ", "ConfigMap kube-system/kube-proxy-config: ", "none with --proxy-mode"}},
		{"configmap of something else", []runtime.Object{cm("kube-proxy", "config.conf", "kind: Other\n")}, ProxyModeUnknown, "", []string{"kind \"Other\""}},
	} {
		client := fake.NewClientset(tc.objs...)
		got := proxyMode(context.Background(), client)
		if got.Mode != tc.mode || !strings.Contains(got.Source, tc.source) {
			t.Errorf("%s: %+v", tc.name, got)
		}
		for _, w := range tc.whyParts {
			if !strings.Contains(got.Why, w) {
				t.Errorf("%s: why %q lacks %q", tc.name, got.Why, w)
			}
		}
		for _, a := range client.Actions() {
			if a.GetResource().Resource == "nodes" || a.GetSubresource() == "proxy" {
				t.Errorf("%s: %s %s/%s: the kubelet's API through the node proxy", tc.name, a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
			}
		}
	}
}
