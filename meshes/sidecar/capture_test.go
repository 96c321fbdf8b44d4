package sidecar

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/* from the rules")

// TestRulesGolden: the nat table istio-iptables writes for Istio's
// injector flags.
func TestRulesGolden(t *testing.T) {
	proxytest.Golden(t, filepath.Join("testdata", "istio-nat.rules"), IstioCapture.Rules(), *update)
	proxytest.Golden(t, filepath.Join("testdata", "undo-nat.rules"), undo(), *update)
}

// TestUndoMirrorsRules: every chain and jump the rules add, the undo
// removes.
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
		"mtls":      {func(c *Config) { c.Placement = ServerOnly }, "mTLS is between two sidecars"},
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
