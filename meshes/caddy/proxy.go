package caddy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"loadgen/meshes/proxyproc"
)

// Proxy is a running caddy.
type Proxy struct {
	cfg     Config
	ownsDir bool
	proc    *proxyproc.Process
}

// Start writes caddy.json into the run directory, has `caddy validate`
// check it, and runs `caddy run` inside cfg.NetNS as cfg.User; it returns
// once the inbound, outbound and admin listeners accept connections. ctx
// bounds the start only.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	dir, owned, err := proxyproc.RunDir(cfg.Dir, "loadgen-caddy-")
	if err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	cfg.Dir = dir
	p, err := start(ctx, bin, cfg)
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	p.ownsDir = owned
	return p, nil
}

func start(ctx context.Context, bin string, cfg Config) (*Proxy, error) {
	conf, err := cfg.Render()
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(cfg.Dir, confFile)
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	if err := proxyproc.Chown(cfg.User, cfg.Dir, confPath); err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	env := environ(cfg)
	check := exec.CommandContext(ctx, bin, "validate", "--config", confFile)
	check.Dir, check.Env = cfg.Dir, env
	if out, err := check.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("caddy: caddy validate rejected %s (%v): %s", confPath, err, lastLine(out))
	}
	s := cfg.Sidecar
	proc, err := proxyproc.Start(ctx, proxyproc.Spec{
		Name:  "caddy",
		Path:  bin,
		Args:  []string{"run", "--config", confFile},
		Env:   env,
		Dir:   cfg.Dir,
		Log:   logFile,
		NetNS: cfg.NetNS,
		User:  cfg.User,
		Ready: []string{s.Inbound.String(), s.Outbound.String(), s.Admin.String()},
		Stop:  syscall.SIGTERM,
		Grace: 2 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{cfg: cfg, proc: proc}, nil
}

// environ keeps caddy's files in the run directory (it writes under HOME
// and the XDG directories otherwise) and sets its threads.
func environ(cfg Config) []string {
	return append(os.Environ(),
		"HOME="+cfg.Dir,
		"XDG_DATA_HOME="+filepath.Join(cfg.Dir, storageDir),
		"XDG_CONFIG_HOME="+filepath.Join(cfg.Dir, storageDir),
		"GOMAXPROCS="+strconv.Itoa(cfg.Sidecar.Threads()),
	)
}

// lastLine is caddy validate's verdict: the last line it printed.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Dir is the run directory.
func (p *Proxy) Dir() string { return p.cfg.Dir }

// PIDs lists caddy's processes (one: goroutines on GOMAXPROCS threads).
func (p *Proxy) PIDs() ([]int, error) { return p.proc.PIDs() }

// Done is closed when caddy has exited.
func (p *Proxy) Done() <-chan struct{} { return p.proc.Done() }

// Tail is the last lines caddy logged.
func (p *Proxy) Tail() string { return p.proc.Tail() }

// Close stops caddy (SIGTERM, then SIGKILL after 2s), waits until it is
// gone, and removes the run directory if Start made it.
func (p *Proxy) Close() error {
	err := p.proc.Close()
	if p.ownsDir {
		if rerr := os.RemoveAll(p.cfg.Dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("caddy: %w", rerr))
		}
	}
	return err
}
