package haproxy

import (
	"bytes"
	"context"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/mtls"
)

var update = flag.Bool("update", false, "rewrite testdata/*.cfg from Render")

func pod() layout.Sidecar {
	return layout.Pod(netip.MustParseAddr("198.18.0.2"), 8080, netip.MustParseAddrPort("198.18.0.3:8080"))
}

func renderCases() []struct {
	name string
	cfg  Config
} {
	withMTLS := pod()
	withMTLS.Workers = 4
	withMTLS.MTLS = &layout.MTLS{CA: "/etc/loadgen/mtls/root-cert.pem", Cert: "/etc/loadgen/mtls/default.loadgen.crt",
		Key: "/etc/loadgen/mtls/default.loadgen.key", PeerID: "spiffe://cluster.local/ns/default/sa/httpbin",
		PeerName: "httpbin.default.svc.cluster.local"}
	return []struct {
		name string
		cfg  Config
	}{
		{"loopback", Config{Sidecar: layout.Loopback(15006, 8080, 15001, 8081, 15000)}},
		{"pod", Config{Sidecar: pod(), NetNS: "ignored-by-render", Dir: "/ignored"}},
		{"mtls", Config{Sidecar: withMTLS}},
	}
}

// needHaproxy returns the haproxy binary, or skips the test (fails it in CI).
func needHaproxy(t *testing.T) string {
	t.Helper()
	bin, err := Available()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v: .ci/run must install it", err)
		}
		t.Skip(err)
	}
	return bin
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.Render()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".cfg")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Render() differs from %s (run with -update if intended):\n%s", golden, got)
			}
		})
	}
}

// TestRenderHaproxyC has the installed haproxy check every layout, the
// mTLS one with real certificate files.
func TestRenderHaproxyC(t *testing.T) {
	bin := needHaproxy(t)
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tc.cfg
			if cfg.Sidecar.MTLS != nil {
				ca, err := mtls.New(dir)
				if err != nil {
					t.Fatal(err)
				}
				files, _, err := ca.Issue(mtls.Workload{Namespace: "default", ServiceAccount: "loadgen"}, mtls.Workload{Namespace: "default", ServiceAccount: "httpbin"})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Sidecar.MTLS = files
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
	c := Config{Sidecar: pod()}
	c.Sidecar.Upstream = netip.AddrPort{}
	if _, err := c.Render(); err == nil || !strings.Contains(err.Error(), "upstream address") {
		t.Errorf("Render() error %v, want the upstream named", err)
	}
}
