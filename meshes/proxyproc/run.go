package proxyproc

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Run is a proxy started in a run directory of its own (its config, logs
// and sockets); a profile's Proxy embeds it for PIDs, Done, Tail, Dir and
// Close.
type Run struct {
	*Process
	dir   string
	owned bool // made by StartIn: Close removes it
}

// StartIn makes the run directory of the proxy called name (dir, or a new
// temporary directory loadgen-NAME-PID-…), has prepare write the proxy's
// files there and say how to run it, and starts it. If anything fails, a
// directory StartIn made is removed again.
func StartIn(ctx context.Context, name, dir string, prepare func(dir string) (Spec, error)) (*Run, error) {
	dir, owned, err := RunDir(dir, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &Run{dir: dir, owned: owned}
	spec, err := prepare(dir)
	if err == nil {
		spec.Dir = dir
		r.Process, err = Start(ctx, spec)
	}
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	return r, nil
}

// Dir is the run directory.
func (r *Run) Dir() string { return r.dir }

// Close stops the proxy (see Process.Close) and removes the run directory
// if StartIn made it.
func (r *Run) Close() error {
	err := r.Process.Close()
	if r.owned {
		if rerr := os.RemoveAll(r.dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w", r.spec.Name, rerr))
		}
	}
	return err
}
