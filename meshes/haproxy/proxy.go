package haproxy

import (
	"context"
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
	*proxyproc.Run
	cfg Config // as run: Dir set
}

// Start writes haproxy.cfg (and, with mTLS, workload.pem) into the run
// directory, has `haproxy -c` check it, and runs haproxy in the foreground
// inside cfg.NetNS as cfg.User; it returns once the inbound, outbound and
// admin listeners accept connections. ctx bounds the start only. Close
// stops it (SIGTERM, then SIGKILL after 2s) and removes a run directory
// Start made; a haproxy that had died is reported with its last log lines.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	conf, err := cfg.Render()
	if err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, fmt.Errorf("haproxy: %w", err)
	}
	run, err := proxyproc.StartIn(ctx, "haproxy", cfg.Dir, func(dir string) (proxyproc.Spec, error) {
		cfg.Dir = dir
		return prepare(ctx, bin, cfg, conf)
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{Run: run, cfg: cfg}, nil
}

// prepare writes the files and has haproxy -c check them.
func prepare(ctx context.Context, bin string, cfg Config, conf []byte) (proxyproc.Spec, error) {
	if err := writeFiles(cfg, conf); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("haproxy: %w", err)
	}
	check := exec.CommandContext(ctx, bin, "-c", "-q", "-f", confFile)
	check.Dir = cfg.Dir
	if out, err := check.CombinedOutput(); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("haproxy: haproxy -c rejected %s (%v): %s", filepath.Join(cfg.Dir, confFile), err, oneLine(out))
	}
	s := cfg.Sidecar
	return proxyproc.Spec{
		Name:  "haproxy",
		Path:  bin,
		Args:  []string{"-db", "-f", confFile},
		Log:   logFile,
		NetNS: cfg.NetNS,
		User:  cfg.User,
		Ready: []string{s.Inbound.String(), s.Outbound.String(), s.Admin.String()},
		Stop:  syscall.SIGTERM, // hard stop: a step is over
		Grace: 2 * time.Second,
	}, nil
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
