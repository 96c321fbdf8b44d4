// Package proxyproc runs the process of one real proxy for the meshes/<proxy>
// profiles: in a process group of its own, optionally inside a named network
// namespace and under another user (a sidecar runs as Istio's UID 1337, so
// that the capture rules exempt its own traffic), with its output in a log
// file of its run directory. Start returns once the proxy accepts
// connections on every address it must listen on; PIDs lists the process
// group for cost sampling; Close stops it gracefully, then kills the whole
// group, and reports a proxy that died with the last lines it logged.
package proxyproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of Spec.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultGrace        = 5 * time.Second
	killWait            = 5 * time.Second
	pollEvery           = 10 * time.Millisecond
	tailLines           = 5
)

// User is the identity a proxy runs as.
type User struct{ UID, GID uint32 }

// Spec says how to run one proxy.
type Spec struct {
	// Name is what errors call the proxy ("haproxy").
	Name string
	// Path and Args are the executable and its arguments (without argv[0]).
	Path string
	Args []string
	// Env is the environment; nil inherits this process's.
	Env []string
	// Dir is the working directory; the log files are in it.
	Dir string
	// Log is the file in Dir that receives the proxy's stdout and stderr.
	Log string
	// ErrorLog, if set, is another file in Dir the proxy writes its errors
	// to (nginx's error.log): its tail is reported too.
	ErrorLog string

	// NetNS is a named network namespace (under /var/run/netns) to run the
	// proxy in; empty runs it in this process's own.
	NetNS string
	// User, if set, runs the proxy as that user and group (no
	// supplementary groups). Setting it needs root.
	User *User

	// Ready lists the TCP addresses (dialed inside NetNS) that must accept
	// connections before Start returns.
	Ready []string
	// StartTimeout bounds Start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration

	// Stop is the signal of a graceful stop (0: SIGTERM), Grace how long
	// Close waits after it before SIGKILL (0: DefaultGrace).
	Stop  syscall.Signal
	Grace time.Duration
}

// Process is one running proxy.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	exitErr error         // read only after done

	closeOnce sync.Once
	closeErr  error
}

// Start runs the proxy and waits until it accepts connections on every
// address of spec.Ready. ctx bounds the start only; Close stops the proxy.
// A proxy that exits or does not get ready in time is killed, and the
// error carries the last lines it logged.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Path)
	}
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = DefaultStartTimeout
	}
	if spec.Stop == 0 {
		spec.Stop = syscall.SIGTERM
	}
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	if spec.Log == "" {
		spec.Log = spec.Name + ".log"
	}
	ctx, cancel := context.WithTimeout(ctx, spec.StartTimeout)
	defer cancel()

	out, err := os.OpenFile(filepath.Join(spec.Dir, spec.Log), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", spec.Name, err)
	}
	defer out.Close() // the proxy holds its own copy
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = SysProcAttr(spec.User)
	p := &Process{spec: spec, cmd: cmd}
	if err := p.launch(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", spec.Name, spec.Path, err)
	}
	if err := p.waitReady(ctx); err != nil {
		p.killGroup()
		return nil, fmt.Errorf("%s: %v: %s", spec.Name, err, p.Tail())
	}
	return p, nil
}

// launch starts the process; done is closed when it has exited.
func (p *Process) launch() error {
	p.done = make(chan struct{})
	return Launch(p.cmd, p.spec.NetNS, func(err error) {
		p.exitErr = err
		close(p.done)
	})
}

// Launch starts cmd from a goroutine locked to its OS thread until cmd
// exits, then calls exited with cmd.Wait's result. The child is created in
// the thread's network namespace, ns if set, and Pdeathsig (see
// SysProcAttr) fires when that thread, not the process, ends. A thread
// moved into another namespace is never unlocked: the runtime retires it
// when the goroutine returns.
func Launch(cmd *exec.Cmd, ns string, exited func(error)) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if ns != "" {
			if err := enter(ns); err != nil {
				started <- err
				return // the thread stays locked: retired
			}
		} else {
			defer runtime.UnlockOSThread()
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited(cmd.Wait())
	}()
	return <-started
}

func (p *Process) waitReady(ctx context.Context) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	pending := slices.Clone(p.spec.Ready)
	for {
		for len(pending) > 0 && Reachable(p.spec.NetNS, pending[0]) {
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited while starting (%v)", p.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("not accepting connections on %s%s after %v", pending[0], p.where(), p.spec.StartTimeout)
		case <-tick.C:
		}
	}
}

func (p *Process) where() string {
	if p.spec.NetNS == "" {
		return ""
	}
	return " in network namespace " + p.spec.NetNS
}

// PID is the pid of the process Start ran.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process Start ran has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// PIDs lists the live processes of the proxy's process group, ascending:
// the proxy and the workers it forked, whose CPU and memory it costs.
func (p *Process) PIDs() ([]int, error) {
	select {
	case <-p.done:
		return nil, fmt.Errorf("%s (pid %d) is not running: %v: %s", p.spec.Name, p.PID(), p.exitErr, p.Tail())
	default:
	}
	return GroupMembers(p.PID())
}

// Tail is the last lines the proxy logged (its error log's, then its
// output's), on one line.
func (p *Process) Tail() string {
	var parts []string
	for _, f := range []string{p.spec.ErrorLog, p.spec.Log} {
		if f == "" {
			continue
		}
		if t := TailFile(filepath.Join(p.spec.Dir, f), tailLines); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return p.spec.Name + " logged nothing"
	}
	return strings.Join(parts, "; ")
}

// Close stops the proxy: its graceful stop signal, then after the grace
// period SIGKILL to every process of its group; it returns once none is
// left. It reports a proxy that had died before Close, with its last log
// lines, and processes that would not die. Calling it again returns the
// first result.
func (p *Process) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *Process) close() error {
	var errs []error
	select {
	case <-p.done:
		if p.exitErr != nil {
			errs = append(errs, fmt.Errorf("%s had exited before Close (%v): %s", p.spec.Name, p.exitErr, p.Tail()))
		}
	default:
		if err := p.cmd.Process.Signal(p.spec.Stop); err == nil {
			select {
			case <-p.done:
			case <-time.After(p.spec.Grace):
			}
		}
	}
	if err := p.killGroup(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killGroup kills every live process of the group and the process itself,
// and waits until all are gone.
func (p *Process) killGroup() error {
	deadline := time.Now().Add(killWait)
	for {
		pids, err := GroupMembers(p.PID())
		if err != nil {
			return err
		}
		exited := false
		select {
		case <-p.done:
			exited = true
		default:
		}
		if len(pids) == 0 && exited {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: processes %v still alive %v after SIGKILL", p.spec.Name, pids, killWait)
		}
		for _, pid := range pids {
			Kill(pid)
		}
		time.Sleep(pollEvery)
	}
}

// TailFile is the last n non-blank lines of a file joined with "; " (at
// most 2000 bytes), or "" if it is empty or missing.
func TailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines[max(0, len(lines)-n):], "; ")
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
