package envoy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"loadgen/meshes/proxyproc"
)

// Files of the run directory.
const (
	confFile = "envoy.yaml"
	logFile  = "envoy.log"
)

// Proxy is a running envoy.
type Proxy struct {
	*proxyproc.Run
	cfg Config
}

// Args is envoy's command line for the bootstrap at path, as the meshes
// start it: Istio's pilot-agent passes these flags (--concurrency 2 by
// default); hot restart is off so several envoys can run on one machine.
func (c Config) Args(path string) []string {
	args := []string{"-c", path}
	if n := c.concurrency(); n > 0 {
		args = append(args, "--concurrency", strconv.Itoa(n))
	}
	return append(args,
		"--drain-time-s", "45",
		"--drain-strategy", "immediate",
		"--local-address-ip-version", "v4",
		"--disable-hot-restart",
		"--log-level", "warning",
	)
}

// Start writes envoy.yaml into the run directory, has `envoy --mode
// validate` check it, and runs envoy inside cfg.NetNS as cfg.User; it
// returns once every listener and the admin accept connections. Without
// an envoy binary it says that one is needed. Close stops it (SIGTERM,
// then SIGKILL after 2s) and removes a run directory Start made.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	conf, err := cfg.Render(YAML)
	if err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, fmt.Errorf("envoy: %w", err)
	}
	run, err := proxyproc.StartIn(ctx, "envoy", cfg.Dir, func(dir string) (proxyproc.Spec, error) {
		cfg.Dir = dir
		return prepare(ctx, bin, cfg, conf)
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{Run: run, cfg: cfg}, nil
}

// prepare writes the bootstrap and has envoy --mode validate check it.
func prepare(ctx context.Context, bin string, cfg Config, conf []byte) (proxyproc.Spec, error) {
	path := filepath.Join(cfg.Dir, confFile)
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("envoy: %w", err)
	}
	if err := proxyproc.Chown(cfg.User, cfg.Dir, path); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("envoy: %w", err)
	}
	check := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", path)
	check.Dir = cfg.Dir
	check.SysProcAttr = proxyproc.SysProcAttr(cfg.User)
	if out, err := check.CombinedOutput(); err != nil {
		return proxyproc.Spec{}, fmt.Errorf("envoy: envoy --mode validate rejected %s (%v): %s", path, err, strings.TrimSpace(string(out)))
	}
	s := cfg.Sidecar
	ready := []string{s.Inbound.String(), s.Outbound.String(), s.Admin.String()}
	if cfg.Stats.IsValid() {
		ready = append(ready, cfg.Stats.String())
	}
	return proxyproc.Spec{
		Name:  "envoy",
		Path:  bin,
		Args:  cfg.Args(path),
		Log:   logFile,
		NetNS: cfg.NetNS,
		User:  cfg.User,
		Ready: ready,
		Stop:  syscall.SIGTERM,
		Grace: 2 * time.Second,
	}, nil
}

// Requests is the HTTP requests the inbound and outbound listeners
// received, by Envoy's own counters (http.PREFIX.downstream_rq_total on
// the admin's /stats).
func (p *Proxy) Requests() (uint64, error) {
	n := p.cfg.names()
	ns := p.cfg.NetNS
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return proxyproc.DialContext(ctx, ns, addr)
		}},
	}
	resp, err := client.Get("http://" + p.cfg.Sidecar.Admin.String() + "/stats?filter=downstream_rq_total")
	if err != nil {
		return 0, fmt.Errorf("envoy: admin stats: %w", err)
	}
	defer resp.Body.Close()
	return sumStats(resp.Body, "http."+n.inboundStat+".downstream_rq_total", "http."+n.outboundSt+".downstream_rq_total")
}

// sumStats adds up the named counters of the admin's /stats text
// ("name: value" per line); a counter not there yet counts 0.
func sumStats(r io.Reader, names ...string) (uint64, error) {
	var total uint64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		for _, want := range names {
			if name != want {
				continue
			}
			v, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("envoy: admin stats: %s %q", name, value)
			}
			total += v
		}
	}
	return total, sc.Err()
}
