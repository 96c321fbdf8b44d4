package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/caddy"
	"loadgen/meshes/envoy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/layout"
	"loadgen/meshes/leftover"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxyproc"
	"loadgen/meshes/sidecar"
	"loadgen/targets/httpbin"
)

// sidecarPort is where the target listens in a sidecar path's server pod.
const sidecarPort = 8080

// sidecarPaths are a sweep's paths through local sidecars, running: for
// each its own pods, the target in the server pod, and the sidecars its
// placement names.
type sidecarPaths struct {
	pods    []*sidecar.Pods
	targets []*httpbin.Server
	cars    map[string]*sidecar.Sidecar
	failed  map[string]error // a path whose sidecars could not start: its steps fail with it
}

// startSidecarPaths builds every sidecar path of spec and points it at its
// pods: the URL of the target in the server pod, the client pod to send
// from, the sidecars' processes to watch. A path whose proxy cannot start
// (not installed, no envoy binary) is not fatal: its steps fail with the
// reason and the sweep goes on. Anything else (not root) is.
func startSidecarPaths(ctx context.Context, spec *sweep.Spec) (*sidecarPaths, error) {
	sp := &sidecarPaths{cars: map[string]*sidecar.Sidecar{}, failed: map[string]error{}}
	n := 0
	for i := range spec.Paths {
		p := &spec.Paths[i]
		if p.Sidecar == nil {
			continue
		}
		pods, err := sidecar.NewPods(ctx, leftover.Name(fmt.Sprintf("p%d", n)), uint8(220+n)) // what loadgen cleanup removes once we are gone
		n++
		if err != nil {
			sp.Close()
			return nil, err
		}
		sp.pods = append(sp.pods, pods)
		srv, err := httpbin.New(httpbin.Config{Addr: fmt.Sprintf("0.0.0.0:%d", sidecarPort)})
		if err == nil {
			err = proxyproc.In(pods.Server, srv.Start)
		}
		if err != nil {
			sp.Close()
			return nil, fmt.Errorf("path %s: the target in its server pod: %w", p.Name, err)
		}
		sp.targets = append(sp.targets, srv)
		server := netip.AddrPortFrom(pods.ServerIP, sidecarPort)
		p.URL, p.NetNS = "http://"+server.String(), pods.Client
		cfg := sidecar.Config{
			Proxy: sidecar.Proxy(p.Sidecar.Proxy), Placement: sidecar.Placement(p.Sidecar.Placement),
			ClientNS: pods.Client, ServerNS: pods.Server, ServerAddr: server, ClientIP: pods.ClientIP,
			MTLS: p.Sidecar.MTLS, Workers: p.Sidecar.Workers,
		}
		car, err := sidecar.Start(ctx, cfg)
		if err != nil {
			sp.failed[p.Name] = err
			p.Watch = nil // no proxy of its own to watch: nothing else is
			continue
		}
		sp.cars[p.Name] = car
		if pids, err := car.Pids(); err == nil && len(pids) > 0 {
			// Its own proxies only, whatever a watch given for the path
			// (name:nginx) would match on the host; called as that watch.
			name := p.Sidecar.Proxy
			if p.Watch != nil {
				name = p.Watch.Label()
			}
			p.Watch = &sweep.Watch{PIDs: pids, Name: name}
			p.Workers = cmp.Or(p.Sidecar.Workers, layout.DefaultWorkers) // as the proxy runs them
		}
	}
	return sp, nil
}

// check says why path cannot run a step now: its sidecars did not start,
// or one of them died (with its last log lines).
func (sp *sidecarPaths) check(path string) error {
	if sp == nil {
		return nil
	}
	if err := sp.failed[path]; err != nil {
		return err
	}
	if car := sp.cars[path]; car != nil {
		return car.Err()
	}
	return nil
}

// Close stops the sidecars, the targets and deletes the pods.
func (sp *sidecarPaths) Close() error {
	if sp == nil {
		return nil
	}
	var errs []error
	for _, car := range sp.cars {
		if err := car.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, srv := range sp.targets {
		srv.Close()
	}
	for _, p := range sp.pods {
		if err := p.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	sp.cars, sp.targets, sp.pods = nil, nil, nil
	return errors.Join(errs...)
}

// proxyMissing says why a sidecar profile's proxy cannot run here (not
// installed: its error says how to get it), or nil.
func proxyMissing(proxy string) error {
	var err error
	switch proxy {
	case "nginx":
		_, err = nginxingress.Available()
	case "haproxy":
		_, err = haproxy.Available()
	case "caddy":
		_, err = caddy.Available()
	case "envoy":
		_, err = envoy.Available()
	}
	return err
}

// checkSidecarProxies is a dry run's check of the sidecar paths: root, and
// each path's proxy installed. It prints what a real sweep would fail
// for, with the paths and steps that would.
func checkSidecarProxies(w io.Writer, spec *sweep.Spec) {
	perStep := len(spec.Plan()) / max(1, len(spec.Paths))
	var order []string
	paths := map[string][]string{}
	for _, p := range spec.Paths {
		if p.Sidecar == nil || p.Sidecar.Placement == "none" {
			continue
		}
		if _, ok := paths[p.Sidecar.Proxy]; !ok {
			order = append(order, p.Sidecar.Proxy)
		}
		paths[p.Sidecar.Proxy] = append(paths[p.Sidecar.Proxy], p.Name)
	}
	if hasSidecars(spec) && os.Geteuid() != 0 {
		fmt.Fprint(w, wrap("needs root: sidecar paths make network namespaces and capture rules (run with sudo)", maxWidth, "  "))
	}
	for _, proxy := range order {
		err := proxyMissing(proxy)
		if err == nil {
			continue
		}
		names := paths[proxy]
		fmt.Fprint(w, wrap(fmt.Sprintf("not installed here: %s (%v): the %d steps of %s would fail",
			proxy, err, perStep*len(names), strings.Join(names, ", ")), maxWidth, "  "))
	}
}
