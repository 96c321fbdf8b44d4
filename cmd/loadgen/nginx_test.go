package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"loadgen/meshes/nginxingress"
)

func needNginx(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nginx"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nginx not installed: .ci/run must apt-get install nginx")
		}
		t.Skip("nginx not installed (apt-get install nginx)")
	}
}

// Our own HTTP/2 and gRPC clients against a real, independent HTTP/2 peer:
// nginx (grpc_pass for gRPC, an HTTP/2 listener proxying to httpbin for
// h2c). Counts must match what the targets behind nginx served.
func TestClientsThroughNginx(t *testing.T) {
	needNginx(t)
	g := startGRPCEcho(t)
	gp, err := nginxingress.Start(context.Background(), nginxingress.Config{Listen: "127.0.0.1:0", Upstream: g.Addr(), GRPC: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gp.Close() })

	check := func(t *testing.T, args ...string) int64 {
		t.Helper()
		return runJSON(t, args...).Summary.Requests
	}
	t.Run("grpc unary", func(t *testing.T) {
		before := g.Calls()
		// 3000 calls on 2 connections cross nginx's default of 1000
		// requests per client connection: GOAWAY must be handled.
		n := check(t, "-p", "grpc", "-c", "2", "-m", "4", "-n", "3000", "--size", "512", gp.Addr())
		if n != 3000 || g.Calls()-before != 3000 {
			t.Errorf("generator %d calls, server behind nginx %d", n, g.Calls()-before)
		}
	})
	t.Run("grpc ping-pong", func(t *testing.T) {
		before := g.Messages()
		n := check(t, "-p", "grpc-stream", "-c", "2", "-n", "500", gp.Addr())
		if n != 500 || g.Messages()-before != 500 {
			t.Errorf("generator %d messages, server behind nginx %d", n, g.Messages()-before)
		}
	})
	t.Run("grpc health", func(t *testing.T) {
		if n := check(t, "-p", "grpc", "--health", "-c", "1", "-n", "200", gp.Addr()); n != 200 {
			t.Errorf("%d health checks", n)
		}
	})

	hb := startHTTPBinServer(t)
	hp, err := nginxingress.Start(context.Background(), nginxingress.Config{Listen: "127.0.0.1:0", Upstream: hb.Addr(), GRPC: false, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hp.Close() })
	t.Run("http1 through nginx", func(t *testing.T) {
		before := hb.Served()
		n := check(t, "-c", "4", "-n", "2000", hp.URL()+"/bytes/1024")
		if n != 2000 || hb.Served()-before != 2000 {
			t.Errorf("generator %d, httpbin behind nginx %d", n, hb.Served()-before)
		}
	})
	if !strings.HasPrefix(hp.URL(), "http://") {
		t.Errorf("proxy URL %q", hp.URL())
	}
	h2, err := nginxingress.Start(context.Background(), nginxingress.Config{Listen: "127.0.0.1:0", Upstream: hb.Addr(), HTTP2: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h2.Close() })
	t.Run("h2c through nginx", func(t *testing.T) {
		before := hb.Served()
		n := check(t, "-p", "h2c", "-c", "2", "-m", "10", "-n", "3000", h2.URL()+"/bytes/1024")
		if n != 3000 || hb.Served()-before != 3000 {
			t.Errorf("generator %d, httpbin behind nginx %d", n, hb.Served()-before)
		}
	})
}
