package nginxingress

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.conf from Render")

// renderCases are the golden configs. nginxT marks the ones `nginx -t` can
// check here (no DNS names, no certificate files).
var renderCases = []struct {
	name   string
	cfg    Config
	nginxT bool
}{
	{"default", Config{Listen: "127.0.0.1:8080", Upstream: "127.0.0.1:8081"}, true},
	{"sizing", Config{Listen: "127.0.0.1:8080", Upstream: "127.0.0.1:8081",
		Workers: 4, CPUAffinity: []int{0, 2}, UpstreamKeepalive: 256}, true},
	{"auto", Config{Listen: "[::1]:8080", Upstream: "[::1]:8081",
		Workers: WorkersAuto, CPUAffinity: []int{1, 3}, UpstreamKeepalive: -1}, true},
	{"tls", Config{Listen: "127.0.0.1:8443", Upstream: "httpbin.loadgen.svc.cluster.local:8000",
		TLS: &TLSFiles{Cert: "/etc/loadgen/tls.crt", Key: "/etc/loadgen/tls.key"},
		Dir: "/ignored/by/render", Binary: "/ignored/too"}, false},
	{"mtls", Config{Listen: "127.0.0.1:8443", Upstream: "127.0.0.1:8081",
		TLS: &TLSFiles{Cert: "/etc/loadgen/tls.crt", Key: "/etc/loadgen/tls.key", ClientCA: "/etc/loadgen/client-ca.pem"}}, false},
	{"grpc", Config{Listen: "127.0.0.1:9090", Upstream: "127.0.0.1:9091", GRPC: true}, true},
	{"h2c", Config{Listen: "127.0.0.1:8080", Upstream: "127.0.0.1:8081", HTTP2: true}, true},
}

// needNginx returns the nginx binary, or skips the test (fails it in CI).
func needNginx(t *testing.T) string {
	t.Helper()
	bin, err := Available()
	if err != nil {
		const msg = "nginx not installed: .ci/run must apt-get install nginx"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.Render()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".conf")
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

// TestRenderNginxT has the installed nginx check the golden configs.
func TestRenderNginxT(t *testing.T) {
	bin := needNginx(t)
	for _, tc := range renderCases {
		if !tc.nginxT {
			continue
		}
		t.Run(tc.name, func(t *testing.T) { nginxT(t, bin, t.TempDir(), tc.cfg) })
	}
}

// nginxT renders cfg into dir and has nginx -t check it.
func nginxT(t *testing.T, bin, dir string, cfg Config) {
	t.Helper()
	conf, err := cfg.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(context.Background(), bin, "-t", "-p", dir+"/", "-c", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

func TestRenderRejectsInjection(t *testing.T) {
	cfg := Config{Listen: "127.0.0.1:8080", Upstream: "127.0.0.1:8081;\n}\nserver { listen 80"}
	conf, err := cfg.Render()
	if err == nil || conf != nil {
		t.Fatalf("Render() = %q, %v; want no config and an error", conf, err)
	}
	if !strings.Contains(err.Error(), "character ';' is not allowed") {
		t.Errorf("error %q does not name the character", err)
	}
}

func TestAffinity(t *testing.T) {
	tests := []struct {
		workers int
		cpus    []int
		want    string
	}{
		{2, nil, ""},
		{1, []int{0}, "1"},
		{3, []int{0, 1}, "01 10 01"},
		{2, []int{5, 0}, "100000 000001"},
		{0, []int{1, 3}, "auto 1010"},
	}
	for _, tt := range tests {
		if got := affinity(tt.workers, tt.cpus); got != tt.want {
			t.Errorf("affinity(%d, %v) = %q, want %q", tt.workers, tt.cpus, got, tt.want)
		}
	}
}

// sidecarCases are the golden configs of the sidecar layout.
func sidecarCases() []proxytest.Case[Config] {
	pod := proxytest.Pod()
	withMTLS := proxytest.Pod()
	withMTLS.Workers = 4
	withMTLS.MTLS = proxytest.GoldenMTLS()
	loopback := layout.Loopback(15006, 8080, 15001, 8081, 15000)
	named := proxytest.Named()
	return []proxytest.Case[Config]{
		{Name: "sidecar-loopback", Cfg: Config{Sidecar: &loopback}},
		{Name: "sidecar-pod", Cfg: Config{Sidecar: &pod, NetNS: "ignored-by-render"}},
		{Name: "sidecar-mtls", Cfg: Config{Sidecar: &withMTLS}},
		{Name: "sidecar-named", Cfg: Config{Sidecar: &named}},
	}
}

func TestRenderSidecarGolden(t *testing.T) {
	proxytest.GoldenCases(t, sidecarCases(), ".conf", Config.Render, *update)
}

// TestRenderSidecarNginxT has nginx check every sidecar layout, the mTLS
// one with real certificate files.
func TestRenderSidecarNginxT(t *testing.T) {
	bin := needNginx(t)
	for _, tc := range sidecarCases() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := tc.Cfg
			if cfg.Sidecar.MTLS != nil {
				s := *cfg.Sidecar
				s.MTLS = proxytest.IssueMTLS(t, dir)
				cfg.Sidecar = &s
			}
			nginxT(t, bin, dir, cfg)
		})
	}
}

func TestValidateSidecarAlone(t *testing.T) {
	s := layout.Loopback(1, 2, 3, 4, 5)
	err := Config{Sidecar: &s, Listen: "127.0.0.1:80"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "configured by Sidecar alone") {
		t.Errorf("Validate() = %v", err)
	}
	s.Outbound = s.Inbound
	if err := (Config{Sidecar: &s}).Validate(); err == nil {
		t.Error("a bad layout: no error")
	}
}

func TestSidecarConformance(t *testing.T) {
	needNginx(t)
	proxytest.Run(t, proxytest.Profile{
		Name: "nginx",
		Start: func(ctx context.Context, s layout.Sidecar) (proxytest.Proxy, error) {
			return Start(ctx, Config{Sidecar: &s})
		},
		Hash: proxytest.SHA1,
	})
}

func TestParseStubStatus(t *testing.T) {
	n, err := parseStubStatus(strings.NewReader("Active connections: 1 \nserver accepts handled requests\n 7 7 12 \nReading: 0 Writing: 1 Waiting: 0 \n"))
	if err != nil || n != 12 {
		t.Errorf("parseStubStatus = %d, %v", n, err)
	}
	if _, err := parseStubStatus(strings.NewReader("server accepts handled requests\n 7 7\n")); err == nil {
		t.Error("two numbers: no error")
	}
}

func FuzzParseStubStatus(f *testing.F) {
	f.Add("server accepts handled requests\n 7 7 12\n", uint64(12))
	f.Add("Active connections: 1 \n", uint64(0))
	f.Fuzz(func(t *testing.T, s string, requests uint64) {
		n, err := parseStubStatus(strings.NewReader(s))
		if err == nil && !slices.Contains(strings.Fields(s), strconv.FormatUint(n, 10)) {
			t.Fatalf("%q: %d requests, a number the text does not hold", s, n)
		}
		// nginx's own page after lines that are not its header: the third
		// number of the line below the header, whatever came before.
		var pre strings.Builder
		for line := range strings.Lines(s) {
			if strings.TrimSpace(line) != "server accepts handled requests" {
				pre.WriteString(strings.TrimSuffix(line, "\n") + "\n")
			}
		}
		page := fmt.Sprintf("%sActive connections: 1 \nserver accepts handled requests\n 7 7 %d \nReading: 0 Writing: 1 Waiting: 0 \n", pre.String(), requests)
		if got, err := parseStubStatus(strings.NewReader(page)); err != nil || got != requests {
			t.Fatalf("%q: %d, %v; want %d", page, got, err, requests)
		}
	})
}
