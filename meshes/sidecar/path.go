package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"

	"loadgen/meshes/caddy"
	"loadgen/meshes/envoy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/leftover"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxyproc"
	"loadgen/targets/httpbin"
)

// TargetPort is where the target listens in a path's server pod.
const TargetPort = 8080

// Path is a path through local sidecars, running: its own pods, the
// target (loadgen's httpbin) in the server pod, and the sidecars between
// them when they started.
type Path struct {
	Pods *Pods
	// URL is the target as the client pod reaches it.
	URL string
	// Sidecar is the running sidecars; nil when they could not start, and
	// Failed says why.
	Sidecar *Sidecar
	Failed  error
	target  *httpbin.Server
}

// StartPath makes the pods of a sweep's n-th sidecar path (named for
// loadgen cleanup, on 198.18.(220+n).0/24), starts the target in the server
// pod and the sidecars of cfg, whose pods and server address it sets. A
// proxy that cannot start (not installed, no envoy binary) is not an
// error: Failed holds it, and the path's steps fail with it. Anything else
// (not root) is, and leaves nothing; name is the path's, for the message.
func StartPath(ctx context.Context, n int, name string, cfg Config) (*Path, error) {
	pods, err := NewPods(ctx, leftover.Name(fmt.Sprintf("p%d", n)), uint8(220+n))
	if err != nil {
		return nil, err
	}
	p := &Path{Pods: pods}
	srv, err := httpbin.New(httpbin.Config{Addr: fmt.Sprintf("0.0.0.0:%d", TargetPort)})
	if err == nil {
		err = proxyproc.In(pods.Server, srv.Start)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("path %s: the target in its server pod: %w", name, err)
	}
	p.target = srv
	server := netip.AddrPortFrom(pods.ServerIP, TargetPort)
	p.URL = "http://" + server.String()
	cfg.ClientNS, cfg.ServerNS, cfg.ServerAddr, cfg.ClientIP = pods.Client, pods.Server, server, pods.ClientIP
	if p.Sidecar, err = Start(ctx, cfg); err != nil {
		p.Sidecar, p.Failed = nil, err
	}
	return p, nil
}

// Check says why the path cannot carry load now: its sidecars did not
// start, or one of them died (with its last log lines).
func (p *Path) Check() error {
	if p.Failed != nil {
		return p.Failed
	}
	if p.Sidecar != nil {
		return p.Sidecar.Err()
	}
	return nil
}

// Close stops the sidecars and the target and deletes the pods.
func (p *Path) Close() error {
	var errs []error
	if p.Sidecar != nil {
		errs = append(errs, p.Sidecar.Close())
		p.Sidecar = nil
	}
	if p.target != nil {
		p.target.Close()
		p.target = nil
	}
	errs = append(errs, p.Pods.Close())
	return errors.Join(errs...)
}

// RootMissing says why this process cannot run sidecar paths (their pods
// are network namespaces with capture rules, their proxies run as UID
// 1337): nil as root. A sweep's dry run says it, NewPods fails with it.
func RootMissing() error {
	if geteuid() != 0 {
		return errPathsNeedRoot
	}
	return nil
}

var errPathsNeedRoot = errors.New("sidecar paths need root: network namespaces, iptables and a proxy as UID 1337 (run with sudo)")

// geteuid is os.Geteuid; a test's to change.
var geteuid = os.Geteuid

// ProxyMissing says why proxy cannot run here (not installed: its error
// says how to get it), or nil.
func ProxyMissing(proxy Proxy) error {
	var err error
	switch proxy {
	case Nginx:
		_, err = nginxingress.Available()
	case HAProxy:
		_, err = haproxy.Available()
	case Caddy:
		_, err = caddy.Available()
	case Envoy:
		_, err = envoy.Available()
	}
	return err
}
