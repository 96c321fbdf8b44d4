package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/nginxingress"
)

// demoPaths is the built-in sweep: loadgen's httpbin as a child process
// (so its CPU is its own, not the generator's), and a real nginx reverse
// proxy in front of it where nginx is installed.
type demoPaths struct {
	spec    *sweep.Spec
	note    string
	closers []func()
}

func (d *demoPaths) Close() {
	for i := len(d.closers) - 1; i >= 0; i-- {
		d.closers[i]()
	}
}

// demoWhere is where a path of the demo's plan goes before its servers
// start, as a dry run prints it.
func demoWhere(path string) string {
	if path == "nginx" {
		return "nginx (1 worker) in front of httpbin, started by loadgen"
	}
	return "loadgen's httpbin, started by loadgen"
}

// demoHasNginx tells whether the demo has its nginx path here.
func demoHasNginx() bool { return demoNginx() == nil }

// demoNginx is why the demo has no nginx path here (nginx not found), or
// nil.
func demoNginx() error {
	_, err := nginxingress.Available()
	return err
}

// startDemo starts the demo's servers for plan (sweep.Demo's, with the
// flags over it): httpbin, and nginx in front of it when plan has the
// nginx path; and fills in their addresses and watches.
func startDemo(ctx context.Context, log io.Writer, plan *sweep.Spec) (*demoPaths, error) {
	if err := plan.DemoNeedsNginx(demoNginx); err != nil {
		return nil, err
	}
	_, nginx := plan.PathByName(sweep.DemoNginx)
	d, addr, pid, err := withHTTPBin(ctx, log)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	spec := plan
	nginxURL, nginxPID := "", 0
	if !nginx {
		d.note = "nginx is not installed, so the demo swept the baseline path only (apt-get install nginx adds the nginx path)."
	} else {
		px, err := nginxingress.Start(ctx, nginxingress.Config{Listen: "127.0.0.1:0", Upstream: addr, Workers: 1})
		if err != nil {
			return nil, fmt.Errorf("start nginx: %w", err)
		}
		d.closers = append(d.closers, func() { px.Close() })
		nginxURL, nginxPID = px.URL(), px.MasterPID()
		d.note = "The nginx path is a real nginx (1 worker, generated config) proxying to the same httpbin; " +
			"proxy cpu is nginx's master and worker, target cpu is httpbin's (" + strconv.Itoa(pid) + ")."
	}
	if err := spec.DemoAt(addr, pid, nginxURL, nginxPID); err != nil {
		return nil, err
	}
	d.spec = spec
	ok = true
	return d, nil
}

// withHTTPBin starts the processes of a built-in sweep with loadgen's
// httpbin as a child process; the caller adds its own, and closes d if it
// fails.
func withHTTPBin(ctx context.Context, log io.Writer) (d *demoPaths, addr string, pid int, err error) {
	addr, pid, stop, err := startHTTPBinChild(ctx, log)
	if err != nil {
		return nil, "", 0, err
	}
	return &demoPaths{closers: []func(){stop}}, addr, pid, nil
}
