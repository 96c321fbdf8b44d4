package sidecar

import (
	"context"
	"fmt"
	"net/netip"

	"loadgen/meshes/caddy"
	"loadgen/meshes/envoy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/layout"
	"loadgen/meshes/nginxingress"
)

// startProxy runs one profile in ns as istio-proxy, in the layout lay of
// the pod whose IP is podIP.
func startProxy(ctx context.Context, cfg Config, ns string, podIP netip.Addr, lay layout.Sidecar) (running, error) {
	switch cfg.Proxy {
	case Nginx:
		return nginxingress.Start(ctx, nginxingress.Config{Sidecar: &lay, NetNS: ns, User: proxyUser})
	case HAProxy:
		return haproxy.Start(ctx, haproxy.Config{Sidecar: lay, NetNS: ns, User: proxyUser})
	case Caddy:
		// Caddy cannot bind 127.0.0.6: its inbound side goes to the app
		// on loopback, which the capture rules let through.
		return caddy.Start(ctx, caddy.Config{Sidecar: lay.ForProxy(string(cfg.Proxy)), NetNS: ns, User: proxyUser, AccessLog: cfg.Count})
	case Envoy:
		return envoy.Start(ctx, envoyConfig(ns, podIP, lay))
	}
	return nil, fmt.Errorf("unknown proxy %q", cfg.Proxy)
}

func envoyConfig(ns string, podIP netip.Addr, lay layout.Sidecar) envoy.Config {
	cfg := envoy.Pod(envoy.Istio, podIP, lay)
	cfg.NetNS, cfg.User = ns, proxyUser
	return cfg
}
