package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// run executes one command and turns a failure into an error that names
// the command and carries what it wrote to stderr, because "exit status
// 2" alone never says which of the many `ip` calls went wrong.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if ctxErr := ctx.Err(); ctxErr != nil && !strings.Contains(msg, ctxErr.Error()) {
			msg += " (" + ctxErr.Error() + ")"
		}
		return "", &cmdError{cmd: commandLine(name, args), msg: msg, err: err}
	}
	return stdout.String(), nil
}

// cmdError is a failed command: "lab: ip -n x link add ...: RTNETLINK
// answers: File exists".
type cmdError struct {
	cmd  string
	msg  string
	err  error
	hint string // what to do about it, when we know
}

func (e *cmdError) Error() string {
	s := "lab: " + e.cmd + ": " + e.msg
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

func (e *cmdError) Unwrap() error { return e.err }

// withHint adds advice to a *cmdError, or wraps any other error.
func withHint(err error, hint string) error {
	var ce *cmdError
	if errors.As(err, &ce) {
		ce.hint = hint
		return ce
	}
	return fmt.Errorf("%w (%s)", err, hint)
}

func commandLine(name string, args []string) string {
	if strings.HasPrefix(name, "/") {
		// "/usr/sbin/ip" reads worse than "ip" in an error message.
		name = name[strings.LastIndexByte(name, '/')+1:]
	}
	return strings.Join(append([]string{name}, args...), " ")
}

// builder runs a sequence of setup commands and remembers the first
// failure, so the topology code reads as the list of commands it is
// instead of drowning in "if err != nil".
type builder struct {
	ctx context.Context
	err error
}

// run runs name args... unless an earlier command failed.
func (b *builder) run(name string, args ...string) {
	if b.err != nil {
		return
	}
	_, b.err = run(b.ctx, name, args...)
}

// ip runs `ip -n ns args...`.
func (b *builder) ip(ns string, args ...string) {
	b.run("ip", append([]string{"-n", ns}, args...)...)
}

// exec runs `ip netns exec ns name args...`, for tools without a
// namespace flag of their own (sysctl, iptables).
func (b *builder) exec(ns, name string, args ...string) {
	b.run("ip", append([]string{"netns", "exec", ns, name}, args...)...)
}
