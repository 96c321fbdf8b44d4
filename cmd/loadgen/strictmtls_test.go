package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"loadgen/meshes/caddy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/leftover"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxyproc"
	"loadgen/meshes/proxytest"
	"loadgen/meshes/sidecar"
	"loadgen/targets/httpbin"
)

// TestRunToStrictSidecar sets up a server pod whose real sidecar (nginx,
// HAProxy, Caddy) requires mutual TLS from the run's CA (Istio's STRICT),
// and a client pod without a sidecar: loadgen run from the client pod
// with the client workload's certificate (--cert/--key) is let through to
// the target, and without it gets nothing through and is told to give
// one, whether the proxy refuses in TLS (HAProxy, Caddy) or with an HTTP
// 400 (nginx).
func TestRunToStrictSidecar(t *testing.T) {
	needRoot(t)
	for i, p := range []struct {
		proxy     sidecar.Proxy
		available func() (string, error)
	}{{sidecar.Nginx, nginxingress.Available}, {sidecar.HAProxy, haproxy.Available}, {sidecar.Caddy, caddy.Available}} {
		t.Run(string(p.proxy), func(t *testing.T) {
			proxytest.NeedBinary(t, p.available)
			ctx := context.Background()
			pods, err := sidecar.NewPods(ctx, leftover.Name(fmt.Sprintf("m%d", i)), uint8(236+i))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { pods.Close() })
			srv, err := httpbin.New(httpbin.Config{Addr: fmt.Sprintf("0.0.0.0:%d", sidecar.TargetPort)})
			if err == nil {
				err = proxyproc.In(pods.Server, srv.Start)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			server := netip.AddrPortFrom(pods.ServerIP, sidecar.TargetPort)
			car, err := sidecar.Start(ctx, sidecar.Config{Proxy: p.proxy, Placement: sidecar.ServerOnly, MTLS: true,
				ClientNS: pods.Client, ServerNS: pods.Server, ServerAddr: server, ClientIP: pods.ClientIP})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { car.Close() })
			id := car.ClientIdentity()
			if id == nil {
				t.Fatal("no client identity with MTLS")
			}
			base := []string{"run", "-q", "-c", "2", "-n", "50", "--netns", pods.Client, "--cacert", id.CA, "--sni", id.PeerName}
			url := "https://" + server.String() + "/get"
			before := srv.Served()
			if code, _, stderr := cli(t, append(base, "--cert", id.Cert, "--key", id.Key, url)...); code != 0 {
				t.Fatalf("with the client workload's certificate: exit %d: %s", code, stderr)
			}
			if got := srv.Served() - before; got < 50 {
				t.Errorf("the target served %d requests through the STRICT sidecar, want the run's 50", got)
			}
			before = srv.Served()
			code, _, stderr := cli(t, append(base, url)...)
			if flat := strings.Join(strings.Fields(stderr), " "); code != exitFail || !strings.Contains(flat, "requires a client certificate") || !strings.Contains(flat, "--cert FILE --key FILE") {
				t.Errorf("without a certificate: exit %d %q, want %d and a line naming --cert FILE --key FILE", code, stderr, exitFail)
			}
			if got := srv.Served() - before; got != 0 {
				t.Errorf("without a certificate the target served %d requests, want none past the STRICT sidecar", got)
			}
			if err := car.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
