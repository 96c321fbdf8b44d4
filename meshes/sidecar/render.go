package sidecar

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"loadgen/meshes/caddy"
	"loadgen/meshes/envoy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/layout"
	"loadgen/meshes/nginxingress"
)

// RenderProxies lists the proxies Render renders, in the order loadgen
// mesh render names them: Envoy, then the cluster's (nginx, haproxy,
// caddy). It is Proxies in another order.
func RenderProxies() []Proxy {
	return []Proxy{Envoy, Nginx, HAProxy, Caddy}
}

// loadgen mesh render's defaults: the pod of the profiles' golden files
// (meshes/proxytest.Pod) in RFC 2544's benchmarking range, its app on
// 8080 and its upstream the next pod; the ingress layout listening on
// port 8080 of every address.
const (
	RenderPodIP    = "198.18.0.2"
	RenderAppPort  = 8080
	RenderUpstream = "198.18.0.3:8080"
	RenderListen   = "0.0.0.0:8080"
)

// CheckLayout refuses a layout proxy does not have, in the words of
// loadgen mesh render's flags: the ingress layout is nginx's only, and a
// layout other than Istio's (envoyLayout) is Envoy's only.
func CheckLayout(proxy string, ingress bool, envoyLayout string) error {
	if ingress {
		if proxy != string(Nginx) {
			return errors.New("--ingress is nginx's layout only")
		}
		return nil
	}
	if proxy != string(Envoy) && envoyLayout != string(envoy.Istio) {
		return errors.New("--layout is envoy's only")
	}
	return nil
}

// Rendering is what Render needs beside the proxy and its layout.
type Rendering struct {
	// EnvoyLayout is Envoy's layout, "istio" or "appmesh"
	// (envoy.ParseLayout); the other proxies have Istio's only.
	EnvoyLayout string
	// PodIP names Envoy's node (envoy.Pod).
	PodIP netip.Addr
	// Format is Envoy's: YAML or JSON (envoy.FormatOf).
	Format envoy.Format
}

// Render is the configuration proxy would run with in the sidecar layout
// s, checked as its package checks it, for a proxy run outside loadgen
// (loadgen mesh render): Caddy keeps its files in caddy.StandaloneDir. s
// is taken as given (layout.Sidecar.WithInboundSource makes it a proxy's).
func Render(proxy string, s layout.Sidecar, r Rendering) ([]byte, error) {
	switch Proxy(proxy) {
	case Envoy:
		l, err := envoy.ParseLayout(r.EnvoyLayout)
		if err != nil {
			return nil, err
		}
		return envoy.Pod(l, r.PodIP, s).Render(r.Format)
	case Nginx:
		return nginxingress.Config{Sidecar: &s}.Render()
	case HAProxy:
		return haproxy.Config{Sidecar: s}.Render()
	case Caddy:
		return caddy.Config{Sidecar: s, Dir: caddy.StandaloneDir}.Render()
	}
	return nil, fmt.Errorf("unknown proxy %q: use %s", proxy, orList(RenderProxies()))
}

// orList is "a, b, c or d".
func orList(ps []Proxy) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = string(p)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
