package nginxingress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"loadgen/meshes/leftover"
	"loadgen/meshes/proxyproc"
)

// Bounds of starting and stopping nginx.
const (
	startTimeout = 10 * time.Second // nginx -t, launch, and the port accepting
	quitGrace    = 5 * time.Second  // after SIGQUIT (graceful stop), before SIGKILL
	killWait     = 5 * time.Second  // after SIGKILL, before Close gives up
	portAttempts = 5                // free ports tried when Listen has port 0
	pollEvery    = 10 * time.Millisecond
)

// Files in the run directory (relative paths of the rendered config).
const (
	confFile   = "nginx.conf"
	pidFile    = "nginx.pid"
	errorLog   = "error.log"
	stderrFile = "stderr.log" // nginx's stdout and stderr before it reads error_log
)

// Proxy is a running nginx: a master and its workers.
type Proxy struct {
	cfg     Config // as run: Listen with its real port, Dir and TLS paths absolute
	ownsDir bool   // Dir was made by Start: Close removes it
	cmd     *exec.Cmd
	done    chan struct{} // closed when the master has exited
	exitErr error         // the master's exit; read only after done

	quitGrace time.Duration // Close's wait after SIGQUIT; tests shorten it

	statusReads atomic.Uint64 // stub_status requests made by Requests

	closeOnce sync.Once
	closeErr  error
}

// Start writes the config into the run directory, has `nginx -t` check it,
// starts nginx in the foreground and returns once the master has written
// its pid file, the workers are up and the port accepts connections.
// ctx bounds the start only (at most 10s); Close stops nginx.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := supported(); err != nil {
		return nil, err
	}
	bin, err := cfg.binary()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	if cfg.TLS != nil {
		tlsFiles := *cfg.TLS
		if tlsFiles.Cert, err = filepath.Abs(tlsFiles.Cert); err == nil {
			tlsFiles.Key, err = filepath.Abs(tlsFiles.Key)
		}
		if err != nil {
			return nil, fmt.Errorf("nginxingress: tls files: %w", err)
		}
		cfg.TLS = &tlsFiles
	}
	dir, owned, err := runDir(cfg.Dir)
	if err == nil {
		err = proxyproc.Chown(cfg.User, dir)
	}
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("nginxingress: run directory: %w", err)
	}
	cfg.Dir = dir

	args := []string{"-p", dir + string(filepath.Separator), "-c", filepath.Join(dir, confFile)}
	if hasErrorLogFlag(version(ctx, bin)) {
		// Messages from before the config is read go to stderr.log, not to
		// the compiled-in log (often under /var/log).
		args = append(args, "-e", "stderr")
	}
	host, port, _ := net.SplitHostPort(cfg.Listen)
	pickPort := port == "0"
	for attempt := 1; ; attempt++ {
		run := cfg
		if pickPort {
			if run.Listen, err = freePort(host); err != nil {
				break
			}
		}
		var p *Proxy
		var inUse bool
		p, inUse, err = start(ctx, bin, args, run)
		if err == nil {
			p.ownsDir = owned
			return p, nil
		}
		if !pickPort || !inUse || attempt == portAttempts {
			break
		}
	}
	if owned {
		os.RemoveAll(dir)
	}
	return nil, err
}

// start is one attempt of Start. inUse reports that nginx could not bind
// the port: another process took it.
func start(ctx context.Context, bin string, args []string, cfg Config) (p *Proxy, inUse bool, err error) {
	conf, err := cfg.Render()
	if err != nil {
		return nil, false, err
	}
	confPath := filepath.Join(cfg.Dir, confFile)
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		return nil, false, fmt.Errorf("nginxingress: %w", err)
	}
	// nginx -t creates the temp paths: as the user that will use them.
	test := exec.CommandContext(ctx, bin, append([]string{"-t", "-q"}, args...)...)
	test.Dir = cfg.Dir
	test.SysProcAttr = proxyproc.SysProcAttr(cfg.User)
	if out, err := test.CombinedOutput(); err != nil {
		return nil, false, fmt.Errorf("nginxingress: nginx -t rejected %s (%v): %s", confPath, err, oneLine(out))
	}

	os.Remove(filepath.Join(cfg.Dir, pidFile)) // left by an earlier attempt
	out, err := os.Create(filepath.Join(cfg.Dir, stderrFile))
	if err != nil {
		return nil, false, fmt.Errorf("nginxingress: %w", err)
	}
	defer out.Close() // nginx holds its own copy
	cmd := exec.Command(bin, args...)
	cmd.Dir = cfg.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = proxyproc.SysProcAttr(cfg.User)
	p = &Proxy{cfg: cfg, cmd: cmd, quitGrace: quitGrace}
	if err := p.launch(); err != nil {
		return nil, false, fmt.Errorf("nginxingress: start %s: %w", bin, err)
	}
	if err := p.waitReady(ctx); err != nil {
		p.killAll()
		text := p.startupText()
		return nil, strings.Contains(text, "Address already in use"), fmt.Errorf("nginxingress: %v: %s", err, text)
	}
	return p, false, nil
}

// launch starts nginx (in cfg.NetNS: see proxyproc.Launch); done is
// closed when the master has exited.
func (p *Proxy) launch() error {
	p.done = make(chan struct{})
	return proxyproc.Launch(p.cmd, p.cfg.NetNS, func(err error) {
		p.exitErr = err
		close(p.done)
	})
}

// waitReady polls until nginx's pid file names our master (written after
// the listening socket is bound), the workers are forked (one at least for
// auto) and a TCP connection to the port succeeds.
func (p *Proxy) waitReady(ctx context.Context) error {
	want := max(p.cfg.workers(), 1)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return fmt.Errorf("nginx exited while starting (%v)", p.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("nginx not ready on %s: %w", strings.Join(p.cfg.listeners(), ", "), ctx.Err())
		case <-tick.C:
		}
		if p.ready(want) {
			return nil
		}
	}
}

func (p *Proxy) ready(wantWorkers int) bool {
	b, err := os.ReadFile(filepath.Join(p.cfg.Dir, pidFile))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(p.MasterPID()) {
		return false
	}
	if kids, err := children(p.MasterPID()); err != nil || len(kids) < wantWorkers {
		return false
	}
	for _, addr := range p.cfg.listeners() {
		if !proxyproc.Reachable(p.cfg.NetNS, addr) {
			return false
		}
	}
	return true
}

// startupText is what nginx said while starting: its stderr, else the end
// of its error log.
func (p *Proxy) startupText() string {
	if b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, stderrFile)); len(bytes.TrimSpace(b)) > 0 {
		return oneLine(b)
	}
	if b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, errorLog)); len(bytes.TrimSpace(b)) > 0 {
		return oneLine(b)
	}
	return "nginx wrote nothing to " + stderrFile + " or " + errorLog
}

// Addr is the address nginx listens on (with the port picked, if Listen
// had port 0); in the sidecar layout, the inbound listener's.
func (p *Proxy) Addr() string {
	if p.cfg.Sidecar != nil {
		return p.cfg.Sidecar.Inbound.String()
	}
	return p.cfg.Listen
}

// URL is http://Addr, or https://Addr with TLS.
func (p *Proxy) URL() string {
	if p.cfg.TLS != nil {
		return "https://" + p.Addr()
	}
	return "http://" + p.Addr()
}

// Dir is the run directory: nginx.conf, error.log, nginx.pid, temp paths.
func (p *Proxy) Dir() string { return p.cfg.Dir }

// MasterPID is the pid of the nginx master process.
func (p *Proxy) MasterPID() int { return p.cmd.Process.Pid }

// PIDs lists the master first, then its current workers (its children),
// ascending: the processes whose CPU and memory the proxy costs.
func (p *Proxy) PIDs() ([]int, error) {
	select {
	case <-p.done:
		return nil, fmt.Errorf("nginxingress: nginx (pid %d) is not running: %v", p.MasterPID(), p.exitErr)
	default:
	}
	kids, err := children(p.MasterPID())
	if err != nil {
		return nil, err
	}
	return append([]int{p.MasterPID()}, kids...), nil
}

// Close stops nginx: SIGQUIT (workers finish their requests and exit),
// then after 5s SIGKILL to every process of its group; it waits until
// they are gone and removes the run directory if Start made it. Calling
// it again returns the first result. It reports an nginx that had died
// before Close, and processes that would not die.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *Proxy) close() error {
	var errs []error
	select {
	case <-p.done:
		if p.exitErr != nil {
			errs = append(errs, fmt.Errorf("nginxingress: nginx had exited before Close (%v): %s", p.exitErr, p.errorLogTail()))
		}
	default:
		if err := p.cmd.Process.Signal(syscall.SIGQUIT); err == nil {
			select {
			case <-p.done:
			case <-time.After(p.quitGrace):
			}
		}
	}
	if err := p.killAll(); err != nil {
		errs = append(errs, err)
	}
	if p.ownsDir {
		if err := os.RemoveAll(p.cfg.Dir); err != nil {
			errs = append(errs, fmt.Errorf("nginxingress: %w", err))
		}
	}
	return errors.Join(errs...)
}

// killAll ends the master and every live process of its group (workers,
// also ones a dead master left behind), by pid, and waits until none is
// left. Workers go first, so that a live master reaps them (SIGQUIT keeps
// it from forking new ones) and they are not left to init; then the master.
func (p *Proxy) killAll() error {
	master := p.MasterPID()
	deadline := time.Now().Add(killWait)
	for quit := true; ; quit = false {
		pids, err := groupMembers(master)
		if err != nil {
			return err
		}
		running := true
		select {
		case <-p.done:
			running = false
		default:
		}
		workers := slices.DeleteFunc(pids, func(pid int) bool { return pid == master })
		switch {
		case len(workers) == 0 && !running:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("nginxingress: nginx processes %v (master %d) still alive %v after SIGKILL", workers, master, killWait)
		case len(workers) > 0:
			if quit && running {
				p.cmd.Process.Signal(syscall.SIGQUIT)
			}
			for _, pid := range workers {
				kill(pid)
			}
		default:
			p.cmd.Process.Kill()
		}
		time.Sleep(pollEvery)
	}
}

// errorLogTail is the last lines of nginx's error log, for reports.
func (p *Proxy) errorLogTail() string {
	b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, errorLog))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return oneLine([]byte(strings.Join(lines[max(0, len(lines)-5):], "\n")))
}

// runDir makes dir (absolute) if given, else a new temporary directory
// (owned: Close removes it).
func runDir(dir string) (path string, owned bool, err error) {
	if dir != "" {
		if dir, err = filepath.Abs(dir); err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			return "", false, fmt.Errorf("nginxingress: run directory: %w", err)
		}
		return dir, false, nil
	}
	if dir, err = leftover.TempDir("nginx"); err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil && os.Geteuid() == 0 {
		// Started as root, nginx runs its workers as an unprivileged user
		// (nobody): they must be able to reach the temp paths in here.
		err = os.Chmod(dir, 0o711)
	}
	if err != nil {
		return "", false, fmt.Errorf("nginxingress: run directory: %w", err)
	}
	return dir, true, nil
}

// freePort finds a port free on host now, by binding it and letting go.
func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("nginxingress: find a free port on %s: %w", host, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// oneLine joins nginx's non-blank output lines with "; ", once each when
// repeated (nginx retries bind() five times), keeping the last 2000 bytes.
func oneLine(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && (len(lines) == 0 || l != lines[len(lines)-1]) {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines, "; ")
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

// Done is closed when the nginx master has exited.
func (p *Proxy) Done() <-chan struct{} { return p.done }

// Tail is the last lines of nginx's error log.
func (p *Proxy) Tail() string { return p.errorLogTail() }
