package sidecar

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"loadgen/meshes/envoy"
	"loadgen/meshes/layout"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxytest"
)

// Render renders every proxy the sidecar paths run, each as its own
// package's golden file holds it, from the one dispatch loadgen mesh
// render uses; a name it does not know is refused naming the ones it
// does.
func TestRender(t *testing.T) {
	podIP := netip.MustParseAddr("198.18.0.2")
	pod := layout.Pod(podIP, 8080, netip.MustParseAddrPort("198.18.0.3:8080"))
	istio := Rendering{EnvoyLayout: string(envoy.Istio), PodIP: podIP, Format: envoy.YAML}
	appmeshJSON := Rendering{EnvoyLayout: string(envoy.AppMesh), PodIP: podIP, Format: envoy.JSON}
	for _, tc := range []struct {
		proxy  string
		s      layout.Sidecar
		r      Rendering
		golden string // under meshes/
		has    []string
		err    string
	}{
		{proxy: "envoy", s: pod, r: istio, golden: "envoy/testdata/istio.yaml"},
		{proxy: "envoy", s: pod, r: appmeshJSON, golden: "envoy/testdata/appmesh.json"},
		{proxy: "nginx", s: pod, r: istio, golden: "nginxingress/testdata/sidecar-pod.conf"},
		{proxy: "haproxy", s: pod, r: istio, golden: "haproxy/testdata/pod.cfg"},
		{proxy: "caddy", s: pod.ForProxy("caddy"), r: istio, has: []string{`"dial": "127.0.0.1:8080"`, `"root": "/var/lib/loadgen/caddy/storage"`}},
		{proxy: "envoy", s: pod, r: Rendering{EnvoyLayout: "consul", PodIP: podIP}, err: `envoy: unknown layout "consul": use istio or appmesh`},
		{proxy: "linkerd", s: pod, r: istio, err: `unknown proxy "linkerd": use envoy, nginx, haproxy or caddy`},
		{proxy: "", s: pod, r: istio, err: `unknown proxy "": use envoy, nginx, haproxy or caddy`},
	} {
		got, err := Render(tc.proxy, tc.s, tc.r)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Render(%q): %v, want %q", tc.proxy, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Render(%q, %s): %v", tc.proxy, tc.r.EnvoyLayout, err)
			continue
		}
		if tc.golden != "" {
			want, err := os.ReadFile(filepath.Join("..", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("Render(%q, %s) differs from meshes/%s:\n%s", tc.proxy, tc.r.EnvoyLayout, tc.golden, got)
			}
		}
		for _, h := range tc.has {
			if !strings.Contains(string(got), h) {
				t.Errorf("Render(%q) lacks %s:\n%s", tc.proxy, h, got)
			}
		}
	}
	// RenderProxies is Proxies (internal/sidecarnames') in mesh render's
	// order, and each renders.
	if got, want := slices.Sorted(slices.Values(RenderProxies())), slices.Sorted(slices.Values(Proxies)); !slices.Equal(got, want) {
		t.Errorf("RenderProxies %q, Proxies %q", RenderProxies(), Proxies)
	}
	for _, p := range RenderProxies() {
		if _, err := Render(string(p), pod.ForProxy(string(p)), istio); err != nil {
			t.Errorf("Render(%q): %v", p, err)
		}
	}
}

// Only nginx has the ingress layout and only Envoy a layout but Istio's;
// with --ingress the Envoy layout is not looked at.
func TestCheckLayout(t *testing.T) {
	for _, tc := range []struct {
		proxy   string
		ingress bool
		layout  string
		err     string
	}{
		{"nginx", true, "istio", ""},
		{"nginx", true, "appmesh", ""},
		{"haproxy", true, "istio", "--ingress is nginx's layout only"},
		{"envoy", true, "istio", "--ingress is nginx's layout only"},
		{"envoy", false, "appmesh", ""},
		{"envoy", false, "consul", ""}, // Render names Envoy's layouts
		{"haproxy", false, "istio", ""},
		{"caddy", false, "appmesh", "--layout is envoy's only"},
		{"nginx", false, "appmesh", "--layout is envoy's only"},
	} {
		err := CheckLayout(tc.proxy, tc.ingress, tc.layout)
		if got := fmt.Sprint(err); tc.err == "" && err != nil || tc.err != "" && got != tc.err {
			t.Errorf("CheckLayout(%q, %v, %q) = %v, want %q", tc.proxy, tc.ingress, tc.layout, err, tc.err)
		}
	}
}

// mesh render's defaults are the golden files' pod, and a valid ingress.
func TestRenderDefaults(t *testing.T) {
	pod := layout.Pod(netip.MustParseAddr(RenderPodIP), RenderAppPort, netip.MustParseAddrPort(RenderUpstream))
	if want := proxytest.Pod(); pod != want {
		t.Errorf("the defaults' pod %+v, the golden files' %+v", pod, want)
	}
	if err := (nginxingress.Config{Listen: RenderListen, Upstream: RenderUpstream}).Validate(); err != nil {
		t.Errorf("the default ingress: %v", err)
	}
}
