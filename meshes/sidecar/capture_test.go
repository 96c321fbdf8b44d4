package sidecar

import (
	"context"
	"flag"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/meshes/proxyproc"
	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/* from the rules")

// TestRulesGolden checks that the nat table istio-iptables writes for Istio's
// injector flags.
func TestRulesGolden(t *testing.T) {
	proxytest.Golden(t, filepath.Join("testdata", "istio-nat.rules"), IstioCapture.Rules(), *update)
	proxytest.Golden(t, filepath.Join("testdata", "undo-nat.rules"), undo(), *update)
}

// TestUndoMirrorsRules checks that every chain and jump the rules add, the
// undo removes.
func TestUndoMirrorsRules(t *testing.T) {
	rules, u := string(IstioCapture.Rules()), string(undo())
	for _, line := range strings.Split(rules, "\n") {
		switch {
		case strings.HasPrefix(line, "-N "):
			if !strings.Contains(u, "-X "+line[3:]+"\n") || !strings.Contains(u, "-F "+line[3:]+"\n") {
				t.Errorf("%q is never flushed and deleted", line)
			}
		case strings.HasPrefix(line, "-A PREROUTING"), strings.HasPrefix(line, "-A OUTPUT"):
			if !strings.Contains(u, "-D "+line[3:]+"\n") {
				t.Errorf("%q is never deleted", line)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Proxy: Nginx, Placement: Both, ClientNS: "c", ServerNS: "s", ServerAddr: mustAddrPort("198.18.0.3:8080"), MTLS: true}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	none := Config{Placement: None, ClientNS: "c", ServerNS: "s", ServerAddr: ok.ServerAddr}
	if err := none.Validate(); err != nil {
		t.Errorf("none needs no proxy: %v", err)
	}
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"proxy":     {func(c *Config) { c.Proxy = "linkerd" }, `unknown proxy "linkerd"`},
		"placement": {func(c *Config) { c.Placement = "sidecar" }, `unknown placement "sidecar"`},
		"ns":        {func(c *Config) { c.ServerNS = "" }, "must be named"},
		"same ns":   {func(c *Config) { c.ServerNS = "c" }, "two pods"},
		"addr":      {func(c *Config) { c.ServerAddr = mustAddrPort("198.18.0.3:0") }, "server address"},
		"mtls":      {func(c *Config) { c.Placement = ClientOnly }, "placement both or serveronly"},
	} {
		c := ok
		tc.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if s := ok.String(); s != "nginx both mtls" {
		t.Errorf("String() = %q", s)
	}
}

// kubeClient is the capture of a worker pod of `k8s run --mesh sidecar`:
// only the target's mesh port is captured, the direct port is left out.
var kubeClient = Capture{
	OutboundPort: 15001, InboundPort: 15006, ProxyUID: 1337, ProxyGID: 1337,
	ExcludeInbound:       []uint16{15090, 15021, 15020},
	ExcludeOutbound:      []uint16{8081},
	IncludeOutboundPorts: []uint16{8080},
}

// TestRulesOutboundGolden checks istio-iptables' -o, -x, -q and -i, in its
// order.
func TestRulesOutboundGolden(t *testing.T) {
	proxytest.Golden(t, filepath.Join("testdata", "client-ports-nat.rules"), kubeClient.Rules(), *update)
	ranges := IstioCapture
	ranges.ExcludeOutbound = []uint16{8081}
	ranges.ExcludeOutboundCIDRs = []netip.Prefix{netip.MustParsePrefix("198.18.112.1/32")}
	ranges.IncludeOutbound = Ranges{CIDRs: []netip.Prefix{netip.MustParsePrefix("198.18.112.0/20")}}
	proxytest.Golden(t, filepath.Join("testdata", "ranges-nat.rules"), ranges.Rules(), *update)
}

func TestCaptureValidate(t *testing.T) {
	if err := kubeClient.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Capture){
		"same ports": func(c *Capture) { c.InboundPort = c.OutboundPort },
		"port 0":     func(c *Capture) { c.ExcludeOutbound = []uint16{0} },
		"ipv6":       func(c *Capture) { c.ExcludeOutboundCIDRs = []netip.Prefix{netip.MustParsePrefix("::1/128")} },
		"all and list": func(c *Capture) {
			c.IncludeOutbound = Ranges{All: true, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
		},
	} {
		c := kubeClient
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestOutboundExclusions checks that in a real pair of namespaces, a
// connection to a port the capture leaves out reaches the server; one to a
// captured port reaches the outbound listener instead. With the exclusion
// dropped, the direct port is captured too: what the node test's broken
// exclusion shows end to end.
func TestOutboundExclusions(t *testing.T) {
	client, server := pods(t)
	ctx := context.Background()
	// The outbound listener in the client pod, and two app ports on the
	// server: each answers its own name to a connection.
	serve(t, client, "0.0.0.0:15001", "proxy")
	serve(t, server, serverIP+":8080", "mesh")
	serve(t, server, serverIP+":8081", "direct")
	for _, tc := range []struct {
		name      string
		capture   Capture
		mesh, dir string
	}{
		{"ports", kubeClient, "proxy", "direct"},
		{"all but the direct port", func() Capture { c := IstioCapture; c.ExcludeOutbound = []uint16{8081}; return c }(), "proxy", "direct"},
		{"exclusion broken", IstioCapture, "proxy", "proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Install, as a pod's init container runs it: in the
			// namespace it is in.
			if err := proxyproc.In(client, func() error { return tc.capture.Install(ctx) }); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := remove(ctx, client); err != nil {
					t.Fatal(err)
				}
			}()
			if got := hello(t, client, serverIP+":8080"); got != tc.mesh {
				t.Errorf("port 8080 reached %q, want %q", got, tc.mesh)
			}
			if got := hello(t, client, serverIP+":8081"); got != tc.dir {
				t.Errorf("port 8081 reached %q, want %q", got, tc.dir)
			}
		})
	}
}

// serve answers name to every connection to addr in ns.
func serve(t *testing.T, ns, addr, name string) {
	t.Helper()
	var ln net.Listener
	err := proxyproc.In(ns, func() (err error) { ln, err = net.Listen("tcp4", addr); return err })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(name))
			c.Close()
		}
	}()
}

// hello is what the listener that took a connection to addr from ns said.
func hello(t *testing.T, ns, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := proxyproc.DialContext(ctx, ns, addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
