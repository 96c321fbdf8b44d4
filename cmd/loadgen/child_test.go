package main

import (
	"context"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestChildListening: startChild reads the address each `loadgen serve`
// says it listens on, in the first line serve.go writes (listening.Addr):
// after a scheme or none, before a space, ';' or ','.
func TestChildListening(t *testing.T) {
	t.Setenv("LOADGEN_TEST_AS_CLI", "1")
	for _, args := range [][]string{
		{"httpbin"},
		{"httpbin", "--tls", "--http3=false"},
		{"tcp"},
		{"udp"},
		{"grpc"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append(append([]string{"serve"}, args...), "--addr", "127.0.0.1:0", "--for", "1m")...)
			addr, _, stop, err := startChild(context.Background(), io.Discard, cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
				t.Errorf("read %q, want the loopback address and port it listens on", addr)
			}
		})
	}
}
