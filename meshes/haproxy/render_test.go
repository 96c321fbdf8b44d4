package haproxy

import (
	"context"
	"flag"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.cfg from Render")

func renderCases() []proxytest.Case[Config] {
	withMTLS := proxytest.Pod()
	withMTLS.Workers = 4
	withMTLS.MTLS = proxytest.GoldenMTLS()
	return []proxytest.Case[Config]{
		{Name: "loopback", Cfg: Config{Sidecar: layout.Loopback(15006, 8080, 15001, 8081, 15000)}},
		{Name: "pod", Cfg: Config{Sidecar: proxytest.Pod(), NetNS: "ignored-by-render", Dir: "/ignored"}},
		{Name: "mtls", Cfg: Config{Sidecar: withMTLS}},
		{Name: "named", Cfg: Config{Sidecar: proxytest.Named()}},
	}
}

func needHaproxy(t *testing.T) string { return proxytest.NeedBinary(t, Available) }

func TestRenderGolden(t *testing.T) {
	proxytest.GoldenCases(t, renderCases(), ".cfg", Config.Render, *update)
}

// TestRenderHaproxyC has the installed haproxy check every layout, the
// mTLS one with real certificate files.
func TestRenderHaproxyC(t *testing.T) {
	bin := needHaproxy(t)
	for _, tc := range renderCases() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tc.Cfg
			if cfg.Sidecar.MTLS != nil {
				cfg.Sidecar.MTLS = proxytest.IssueMTLS(t, dir)
			}
			cfg.Dir = dir
			conf, err := cfg.Render()
			if err != nil {
				t.Fatal(err)
			}
			if err := writeFiles(cfg, conf); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(context.Background(), bin, "-c", "-f", confFile)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
				t.Fatalf("haproxy -c: %v\n%s", err, out)
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	c := Config{Sidecar: proxytest.Pod()}
	c.Sidecar.Upstream = netip.AddrPort{}
	if _, err := c.Render(); err == nil || !strings.Contains(err.Error(), "upstream address") {
		t.Errorf("Render() error %v, want the upstream named", err)
	}
}
