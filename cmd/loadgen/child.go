package main

import (
	"context"
	"io"
	"os"
	"os/exec"

	"loadgen/targets/listening"
)

// startHTTPBinChild starts `loadgen serve httpbin` as a child process on a
// free loopback port (so its CPU is its own, not the generator's), bounded
// in time and killed with us. stop ends it.
func startHTTPBinChild(ctx context.Context, log io.Writer) (addr string, pid int, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	return startChild(ctx, log, exec.Command(exe, append([]string{"serve", "httpbin", "--addr", "127.0.0.1:0"}, listening.ForArgs(listening.HelperLifetime)...)...))
}

// startChild starts a `loadgen serve` command, killed with us, with
// loadgen's environment, and waits for the address it says it listens on
// (listening.Start: serve.go prints the line, that reads it).
func startChild(ctx context.Context, log io.Writer, target *exec.Cmd) (addr string, pid int, stop func(), err error) {
	target.SysProcAttr = killedWithUs()
	if target.Env == nil {
		target.Env = childEnv()
	}
	addr, stop, err = listening.Start(ctx, target, log)
	if err != nil {
		return "", 0, nil, err
	}
	return addr, target.Process.Pid, stop, nil
}
