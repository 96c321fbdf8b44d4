package main

import (
	"context"
	"fmt"
	"io"

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
	if nginx {
		px, err := nginxingress.StartDemo(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("start nginx: %w", err)
		}
		d.closers = append(d.closers, func() { px.Close() })
		nginxURL, nginxPID = px.URL(), px.MasterPID()
	}
	d.note = nginxingress.DemoNote(pid, nginx)
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
