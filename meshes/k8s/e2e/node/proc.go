package node

import (
	"bytes"
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
)

// Proc is one of the node's processes, as the state file records it: the
// pid and its start time (so that a reused pid is never taken for it).
type Proc struct {
	Name  string `json:"name"`
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"` // /proc/PID/stat field 22, in clock ticks since boot
	Log   string `json:"log"`
}

// startProc starts a component in a process group of its own, its
// output appended to dir/logs/NAME.log. The process outlives the caller
// (a node started by `make cluster-up` stays up); Stop ends it by pid.
func startProc(dir, name, bin string, args []string, env []string) (*Proc, error) {
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(logs, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "==== %s %s %s\n", time.Now().UTC().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Proc{Name: name, Pid: cmd.Process.Pid, Log: path}
	p.Start, _ = procStart(p.Pid)
	// Reap it when it exits, so that a dead component is seen as dead
	// (not a zombie) by alive().
	go func() { _ = cmd.Wait() }()
	return p, nil
}

// procStart is a process's start time (field 22 of /proc/PID/stat).
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unreadable stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, errors.New("short stat")
	}
	// f[0] is field 3 (state); field 22 is f[19].
	if f[0] == "Z" {
		return 0, errors.New("zombie")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive tells whether the process is still the one that was started.
func (p *Proc) alive() bool {
	s, err := procStart(p.Pid)
	return err == nil && s == p.Start
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) stop(grace time.Duration) {
	if !p.alive() {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for p.alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if p.alive() {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		for range 100 {
			if !p.alive() {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// tail is the last n lines of the component's log.
func (p *Proc) tail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// failure is a component that did not come up: its error and log.
func (p *Proc) failure(err error) error {
	state := "running"
	if !p.alive() {
		state = "exited"
	}
	return fmt.Errorf("%s (pid %d, %s): %v\n--- last lines of %s:\n%s", p.Name, p.Pid, state, err, p.Log, p.tail(25))
}

// waitFor polls check until it succeeds, the process dies or the
// timeout passes.
func (p *Proc) waitFor(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if !p.alive() {
			if last == nil {
				last = errors.New("exited")
			}
			// Give it a moment to write its last words.
			time.Sleep(100 * time.Millisecond)
			return p.failure(fmt.Errorf("exited while starting (last check: %v)", last))
		}
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.failure(fmt.Errorf("not ready within %v: %v", timeout, last))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run runs a command to its end and returns its error with its output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}
