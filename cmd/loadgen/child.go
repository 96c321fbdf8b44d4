package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// listeningRE reads the address a `loadgen serve` child listens on from the
// first line serve.go writes: "httpbin listening on http://127.0.0.1:8080
// (…)", "tcp echo/sink listening on 127.0.0.1:9000; …". Both ends of that
// line are this command's, so the reader stays beside the writer.
var listeningRE = regexp.MustCompile(`listening on (?:https?://)?([^\s;,]+)`)

// startHTTPBinChild starts `loadgen serve httpbin` as a child process on a
// free loopback port (so its CPU is its own, not the generator's), bounded
// in time and killed with us. stop ends it.
func startHTTPBinChild(ctx context.Context, log io.Writer) (addr string, pid int, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	return startChild(ctx, log, exec.Command(exe, "serve", "httpbin", "--addr", "127.0.0.1:0", "--for", "1h"))
}

// startChild starts a `loadgen serve` command, killed with us, and waits
// for the address it says it listens on.
func startChild(ctx context.Context, log io.Writer, target *exec.Cmd) (addr string, pid int, stop func(), err error) {
	target.SysProcAttr = killedWithUs()
	if target.Env == nil {
		target.Env = childEnv()
	}
	out, err := target.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	target.Stderr = log
	if err := target.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start %s: %w", strings.Join(target.Args, " "), err)
	}
	stop = func() {
		target.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { target.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			target.Process.Kill()
			<-done
		}
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	select {
	case addr = <-addrc:
		return addr, target.Process.Pid, stop, nil
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("%s did not start within 10s", strings.Join(target.Args, " "))
	case <-ctx.Done():
		err = ctx.Err()
	}
	stop()
	return "", 0, nil, err
}
