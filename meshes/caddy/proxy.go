package caddy

import (
	"context"
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
	*proxyproc.Run
	cfg Config // as run: Dir set
}

// Start writes caddy.json into the run directory, has `caddy validate`
// check it, and runs `caddy run` inside cfg.NetNS as cfg.User; it returns
// once the inbound, outbound and admin listeners accept connections. ctx
// bounds the start only. Close stops it (SIGTERM, then SIGKILL after 2s)
// and removes a run directory Start made.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	run, err := proxyproc.StartIn(ctx, "caddy", cfg.Dir, func(dir string) (proxyproc.Spec, error) {
		cfg.Dir = dir
		return prepare(ctx, bin, cfg)
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{Run: run, cfg: cfg}, nil
}

// prepare writes caddy.json and has caddy validate check it.
func prepare(ctx context.Context, bin string, cfg Config) (proxyproc.Spec, error) {
	conf, err := cfg.Render()
	if err != nil {
		return proxyproc.Spec{}, err
	}
	confPath := filepath.Join(cfg.Dir, confFile)
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("caddy: %w", err)
	}
	if err := proxyproc.Chown(cfg.User, cfg.Dir, confPath); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("caddy: %w", err)
	}
	env := environ(cfg)
	check := exec.CommandContext(ctx, bin, "validate", "--config", confFile)
	check.Dir, check.Env = cfg.Dir, env
	if out, err := check.CombinedOutput(); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("caddy: caddy validate rejected %s (%v): %s", confPath, err, lastLine(out))
	}
	s := cfg.Sidecar
	return proxyproc.Spec{
		Name:  "caddy",
		Path:  bin,
		Args:  []string{"run", "--config", confFile},
		Env:   env,
		Log:   logFile,
		NetNS: cfg.NetNS,
		User:  cfg.User,
		Ready: []string{s.Inbound.String(), s.Outbound.String(), s.Admin.String()},
		Stop:  syscall.SIGTERM,
		Grace: 2 * time.Second,
	}, nil
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
