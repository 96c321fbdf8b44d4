package listening

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// How long Start waits: for a target's Line, and for a stopped target to
// end after its SIGINT before it is killed.
const (
	ReadyWithin = 10 * time.Second
	StopGrace   = 5 * time.Second
)

// Start starts target, a command that prints its Line once it listens (a
// loadgen serve), and waits for that line: addr is the address it gives
// (Addr). The target's standard error goes to log; the caller sets the
// rest (its environment, that it dies with its parent). stop ends it:
// SIGINT, then SIGKILL after StopGrace. A target that gives no address
// within ReadyWithin, or ctx ending first, is stopped and is the error.
func Start(ctx context.Context, target *exec.Cmd, log io.Writer) (addr string, stop func(), err error) {
	return start(ctx, target, log, ReadyWithin, StopGrace)
}

func start(ctx context.Context, target *exec.Cmd, log io.Writer, ready, grace time.Duration) (addr string, stop func(), err error) {
	out, err := target.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	target.Stderr = log
	if err := target.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w", strings.Join(target.Args, " "), err)
	}
	stop = func() {
		target.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { target.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			target.Process.Kill()
			<-done
		}
	}
	addrc := make(chan string, 1)
	go func() {
		// Read to the end: a target that goes on printing never blocks on
		// its standard output.
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := Addr(sc.Text()); ok {
				select {
				case addrc <- addr:
				default:
				}
			}
		}
	}()
	select {
	case addr = <-addrc:
		return addr, stop, nil
	case <-time.After(ready):
		err = fmt.Errorf("%s did not start within %v", strings.Join(target.Args, " "), ready)
	case <-ctx.Done():
		err = ctx.Err()
	}
	stop()
	return "", nil, err
}
