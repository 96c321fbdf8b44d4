package sidecar

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"loadgen/meshes/caddy"
	"loadgen/meshes/envoy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxytest"
)

func TestProxyMissing(t *testing.T) {
	for _, c := range []struct {
		proxy     Proxy
		available func() (string, error)
	}{{Nginx, nginxingress.Available}, {HAProxy, haproxy.Available}, {Caddy, caddy.Available}, {Envoy, envoy.Available}} {
		_, want := c.available()
		if got := ProxyMissing(c.proxy); (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Errorf("ProxyMissing(%s) = %v, want %v", c.proxy, got, want)
		}
	}
	if err := ProxyMissing("nosuch"); err != nil {
		t.Errorf("ProxyMissing(nosuch) = %v, want nil: the sweep's grammar refuses unknown proxies", err)
	}
}

// TestStartPath starts a sidecar path with a proxy that runs (HAProxy) and
// one that cannot (Envoy without its binary): both reach the target in
// their server pod from the client pod, the first through its sidecars,
// which count the request; the second's Failed and Check say why, and it
// is no error. Close deletes the pods.
func TestStartPath(t *testing.T) {
	pods(t) // skips without root, ip and iptables
	proxytest.NeedBinary(t, haproxy.Available)
	if _, err := exec.LookPath("envoy"); err == nil {
		t.Skip("an envoy binary is installed")
	}
	for i, c := range []struct {
		proxy  Proxy
		failed string // a part of Failed; "" when the sidecars start
	}{{HAProxy, ""}, {Envoy, "no Envoy package exists"}} {
		t.Run(string(c.proxy), func(t *testing.T) {
			p, err := StartPath(context.Background(), 10+i, "px", Config{Proxy: c.proxy, Placement: Both})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if c.failed == "" && (p.Failed != nil || p.Sidecar == nil || p.Check() != nil) {
				t.Fatalf("Failed %v, Check %v, want the sidecars running", p.Failed, p.Check())
			}
			if c.failed != "" && (p.Sidecar != nil || p.Failed == nil || !strings.Contains(p.Failed.Error(), c.failed) || p.Check() != p.Failed) {
				t.Fatalf("Sidecar %v, Failed %v, Check %v, want %q", p.Sidecar, p.Failed, p.Check(), c.failed)
			}
			resp, err := clientIn(t, p.Pods.Client).Get(p.URL + "/get")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s/get from the client pod: status %d", p.URL, resp.StatusCode)
			}
			if s := p.Sidecar; s != nil {
				// Each HAProxy counts the request once it has logged it,
				// which may come after the answer: wait for the count.
				proxytest.WaitCount(t, "the client sidecar", func() (uint64, error) { c, _, err := s.Requests(); return c, err }, 1)
				proxytest.WaitCount(t, "the server sidecar", func() (uint64, error) { _, sv, err := s.Requests(); return sv, err }, 1)
			}
			ns := p.Pods.Client
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat("/var/run/netns/" + ns); !os.IsNotExist(err) {
				t.Errorf("after Close, namespace %s: %v, want it gone", ns, err)
			}
		})
	}
}
