package haproxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"loadgen/meshes/proxyproc"
)

// Proxy is a running haproxy.
type Proxy struct {
	cfg     Config // as run: Dir absolute
	ownsDir bool
	proc    *proxyproc.Process
}

// Start writes haproxy.cfg (and, with mTLS, workload.pem) into the run
// directory, has `haproxy -c` check it, and runs haproxy in the foreground
// inside cfg.NetNS as cfg.User; it returns once the inbound, outbound and
// admin listeners accept connections. ctx bounds the start only.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	conf, err := cfg.Render()
	if err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, fmt.Errorf("haproxy: %w", err)
	}
	dir, owned, err := proxyproc.RunDir(cfg.Dir, "loadgen-haproxy-")
	if err != nil {
		return nil, fmt.Errorf("haproxy: %w", err)
	}
	cfg.Dir = dir
	p, err := start(ctx, bin, cfg, conf)
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	p.ownsDir = owned
	return p, nil
}

func start(ctx context.Context, bin string, cfg Config, conf []byte) (*Proxy, error) {
	if err := writeFiles(cfg, conf); err != nil {
		return nil, fmt.Errorf("haproxy: %w", err)
	}
	check := exec.CommandContext(ctx, bin, "-c", "-q", "-f", confFile)
	check.Dir = cfg.Dir
	if out, err := check.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy: haproxy -c rejected %s (%v): %s", filepath.Join(cfg.Dir, confFile), err, oneLine(out))
	}
	s := cfg.Sidecar
	proc, err := proxyproc.Start(ctx, proxyproc.Spec{
		Name:  "haproxy",
		Path:  bin,
		Args:  []string{"-db", "-f", confFile},
		Dir:   cfg.Dir,
		Log:   logFile,
		NetNS: cfg.NetNS,
		User:  cfg.User,
		Ready: []string{s.Inbound.String(), s.Outbound.String(), s.Admin.String()},
		Stop:  syscall.SIGTERM, // hard stop: a step is over
		Grace: 2 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{cfg: cfg, proc: proc}, nil
}

// writeFiles writes the config and, with mTLS, the certificate and key in
// one PEM file (haproxy's crt), all owned by the proxy's user.
func writeFiles(cfg Config, conf []byte) error {
	paths := []string{cfg.Dir, filepath.Join(cfg.Dir, confFile)}
	if err := os.WriteFile(paths[1], conf, 0o644); err != nil {
		return err
	}
	if m := cfg.Sidecar.MTLS; m != nil {
		cert, err := os.ReadFile(m.Cert)
		if err != nil {
			return err
		}
		key, err := os.ReadFile(m.Key)
		if err != nil {
			return err
		}
		pem := filepath.Join(cfg.Dir, workloadFile)
		if err := os.WriteFile(pem, append(append(cert, '\n'), key...), 0o600); err != nil {
			return err
		}
		paths = append(paths, pem)
	}
	return proxyproc.Chown(cfg.User, paths...)
}

// Dir is the run directory.
func (p *Proxy) Dir() string { return p.cfg.Dir }

// PIDs lists haproxy's processes (one: its threads are the workers).
func (p *Proxy) PIDs() ([]int, error) { return p.proc.PIDs() }

// Done is closed when haproxy has exited.
func (p *Proxy) Done() <-chan struct{} { return p.proc.Done() }

// Tail is the last lines haproxy logged.
func (p *Proxy) Tail() string { return p.proc.Tail() }

// Close stops haproxy (SIGTERM, then SIGKILL after 2s), waits until it is
// gone, and removes the run directory if Start made it. It reports a
// haproxy that had died before, with its last log lines.
func (p *Proxy) Close() error {
	err := p.proc.Close()
	if p.ownsDir {
		if rerr := os.RemoveAll(p.cfg.Dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("haproxy: %w", rerr))
		}
	}
	return err
}
