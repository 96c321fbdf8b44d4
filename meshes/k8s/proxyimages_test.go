package k8s

import (
	"slices"
	"testing"
)

// The defaults --mesh sidecar's help names are the ones it renders: every
// proxy has an official image, listed in SidecarProxies' order, and the
// default proxy is one of them and fills an empty --proxy.
func TestSidecarDefaults(t *testing.T) {
	if got, want := DefaultProxyImageList(), "nginx:1.27, haproxy:3.0, caddy:2.8"; got != want {
		t.Errorf("DefaultProxyImageList() = %q, want %q", got, want)
	}
	for _, p := range SidecarProxies {
		if DefaultProxyImages[p] == "" {
			t.Errorf("proxy %s has no default image", p)
		}
	}
	if len(DefaultProxyImages) != len(SidecarProxies) {
		t.Errorf("images of %d proxies for %d", len(DefaultProxyImages), len(SidecarProxies))
	}
	if !slices.Contains(SidecarProxies, DefaultSidecarProxy) || DefaultSidecarProxy != ProxyHAProxy {
		t.Errorf("DefaultSidecarProxy %q: want haproxy, one of %q", DefaultSidecarProxy, SidecarProxies)
	}
	o, err := Options{Mesh: MeshSidecar}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Sidecar.Proxy != DefaultSidecarProxy || o.Sidecar.Image != DefaultProxyImages[DefaultSidecarProxy] {
		t.Errorf("defaults: proxy %q image %q, want %q %q", o.Sidecar.Proxy, o.Sidecar.Image, DefaultSidecarProxy, DefaultProxyImages[DefaultSidecarProxy])
	}
}
