package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/sidecar"
	"loadgen/results/report"
)

// sidecarPaths are a sweep's paths through local sidecars, running: for
// each its own pods, the target in the server pod, and the sidecars its
// placement names.
type sidecarPaths struct {
	paths  []*sidecar.Path
	byName map[string]*sidecar.Path
}

// startSidecarPaths builds every sidecar path of spec and points it at its
// pods: the URL of the target in the server pod, the client pod to send
// from, the sidecars' processes to watch. A path whose proxy cannot start
// (not installed, no envoy binary) is not fatal: its steps fail with the
// reason and the sweep goes on. Anything else (not root) is.
func startSidecarPaths(ctx context.Context, spec *sweep.Spec) (*sidecarPaths, error) {
	sp := &sidecarPaths{byName: map[string]*sidecar.Path{}}
	n := 0
	for i := range spec.Paths {
		p := &spec.Paths[i]
		if p.Sidecar == nil {
			continue
		}
		cfg := sidecar.Config{
			Proxy: sidecar.Proxy(p.Sidecar.Proxy), Placement: sidecar.Placement(p.Sidecar.Placement),
			MTLS: p.Sidecar.MTLS, Workers: p.Sidecar.Workers,
		}
		path, err := sidecar.StartPath(ctx, n, p.Name, cfg)
		n++
		if err != nil {
			sp.Close()
			return nil, err
		}
		sp.paths = append(sp.paths, path)
		sp.byName[p.Name] = path
		var pids []int
		workers := 0
		if path.Sidecar != nil {
			pids, _ = path.Sidecar.Pids() // unknown: the path's own watch stays
			workers = path.Sidecar.Workers()
		}
		p.SidecarsRunning(path.URL, path.Pods.Client, path.Sidecar != nil, pids, workers)
	}
	return sp, nil
}

// check says why path cannot run a step now: its sidecars did not start,
// or one of them died (with its last log lines).
func (sp *sidecarPaths) check(path string) error {
	if sp == nil {
		return nil
	}
	if p := sp.byName[path]; p != nil {
		return p.Check()
	}
	return nil
}

// Close stops the sidecars, the targets and deletes the pods.
func (sp *sidecarPaths) Close() error {
	if sp == nil {
		return nil
	}
	var errs []error
	for _, p := range sp.paths {
		errs = append(errs, p.Close())
	}
	sp.paths, sp.byName = nil, nil
	return errors.Join(errs...)
}

// checkSidecarProxies is a dry run's check of the sidecar paths: root, and
// each path's proxy installed. It prints what a real sweep would fail
// for, with the paths and steps that would.
func checkSidecarProxies(w io.Writer, spec *sweep.Spec) {
	if spec.HasSidecars() {
		if err := sidecar.RootMissing(); err != nil {
			fmt.Fprint(w, report.Wrap(err.Error(), maxWidth, "  "))
		}
	}
	for _, px := range spec.SidecarProxies() {
		err := sidecar.ProxyMissing(sidecar.Proxy(px.Proxy))
		if err == nil {
			continue
		}
		fmt.Fprint(w, report.Wrap(fmt.Sprintf("not installed here: %s (%v): the %d steps of %s would fail",
			px.Proxy, err, px.Steps, strings.Join(px.Paths, ", ")), maxWidth, "  "))
	}
}
