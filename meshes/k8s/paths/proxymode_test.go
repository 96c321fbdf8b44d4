package paths

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestProxyMode(t *testing.T) {
	cm := func(conf string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}, Data: map[string]string{"config.conf": conf}}
	}
	down := func() ([]byte, error) { return nil, errors.New("dial tcp 10.0.0.1:10249: connection refused") }
	for _, tc := range []struct {
		name     string
		ask      func() ([]byte, error)
		objs     []corev1.ConfigMap
		mode     string
		source   string // a part of it
		whyParts []string
	}{
		{"kube-proxy says", func() ([]byte, error) { return []byte("nftables\n"), nil }, nil, "nftables", "kube-proxy: GET /api/v1/nodes/n1:10249/proxy/proxyMode", nil},
		{"configmap ipvs", down, []corev1.ConfigMap{*cm("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n")}, "ipvs", "ConfigMap kube-system/kube-proxy (config.conf mode: ipvs)", nil},
		{"configmap empty mode", func() ([]byte, error) { return []byte("<html>"), nil }, []corev1.ConfigMap{*cm("kind: KubeProxyConfiguration\nmode: \"\"\n")}, "iptables", "mode empty", nil},
		{"neither", down, nil, ProxyModeUnknown, "", []string{"connection refused", "ConfigMap kube-system/kube-proxy: "}},
		{"configmap of something else", down, []corev1.ConfigMap{*cm("kind: Other\n")}, ProxyModeUnknown, "", []string{"kind \"Other\""}},
	} {
		client := fake.NewClientset()
		for i := range tc.objs {
			if _, err := client.CoreV1().ConfigMaps("kube-system").Create(context.Background(), &tc.objs[i], metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got := proxyMode(context.Background(), client, "n1", tc.ask)
		if got.Mode != tc.mode || !strings.Contains(got.Source, tc.source) {
			t.Errorf("%s: %+v", tc.name, got)
		}
		for _, w := range tc.whyParts {
			if !strings.Contains(got.Why, w) {
				t.Errorf("%s: why %q lacks %q", tc.name, got.Why, w)
			}
		}
	}
}
