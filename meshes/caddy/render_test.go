package caddy

import (
	"context"
	"encoding/json"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from Render")

// pod is the golden pod layout as caddy runs it: the inbound side to the
// app on 127.0.0.1, no source binding.
func pod() layout.Sidecar {
	s := proxytest.Pod()
	s.App = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), s.App.Port())
	s.InboundSource = netip.Addr{}
	return s
}

func named() layout.Sidecar {
	s := pod()
	s.UpstreamName = "localhost:8081"
	return s
}

func renderCases() []proxytest.Case[Config] {
	withMTLS := pod()
	withMTLS.Workers = 4
	withMTLS.MTLS = proxytest.GoldenMTLS()
	return []proxytest.Case[Config]{
		{Name: "loopback", Cfg: Config{Sidecar: layout.Loopback(15006, 8080, 15001, 8081, 15000), Dir: "/run/loadgen-caddy"}},
		{Name: "pod", Cfg: Config{Sidecar: pod(), NetNS: "ignored-by-render", Dir: "/run/loadgen-caddy"}},
		{Name: "mtls", Cfg: Config{Sidecar: withMTLS, Dir: "/run/loadgen-caddy"}},
		{Name: "accesslog", Cfg: Config{Sidecar: pod(), AccessLog: true, Dir: "/run/loadgen-caddy"}},
		{Name: "named", Cfg: Config{Sidecar: named(), Dir: "/run/loadgen-caddy"}},
		{Name: "metrics", Cfg: Config{Sidecar: pod(), Metrics: true, Dir: "/run/loadgen-caddy"}},
	}
}

func needCaddy(t *testing.T) string { return proxytest.NeedBinary(t, Available) }

func TestRenderGolden(t *testing.T) {
	proxytest.GoldenCases(t, renderCases(), ".json", Config.Render, *update)
}

// TestRenderCaddyValidate has the installed caddy check every layout (it
// decodes strictly and loads the certificate files).
func TestRenderCaddyValidate(t *testing.T) {
	bin := needCaddy(t)
	for _, tc := range renderCases() {
		t.Run(tc.Name, func(t *testing.T) {
			cfg := tc.Cfg
			cfg.Dir = t.TempDir()
			if cfg.Sidecar.MTLS != nil {
				cfg.Sidecar.MTLS = proxytest.IssueMTLS(t, cfg.Dir)
			}
			conf, err := cfg.Render()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cfg.Dir, confFile), conf, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(context.Background(), bin, "validate", "--config", confFile)
			cmd.Dir, cmd.Env = cfg.Dir, environ(cfg)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Valid configuration") {
				t.Fatalf("caddy validate: %v\n%s", err, out)
			}
		})
	}
}

// TestRenderDir: the paths in caddy.json are under the run directory:
// StandaloneDir's for a config rendered to run elsewhere, "." when none
// is set.
func TestRenderDir(t *testing.T) {
	for _, tc := range []struct {
		dir, storage, access string
	}{
		{StandaloneDir, "/var/lib/loadgen/caddy/storage", "/var/lib/loadgen/caddy/access.log"},
		{"", "./storage", "./access.log"},
		{"/run/loadgen-caddy", "/run/loadgen-caddy/storage", "/run/loadgen-caddy/access.log"},
	} {
		conf, err := Config{Sidecar: pod(), AccessLog: true, Dir: tc.dir}.Render()
		if err != nil {
			t.Fatal(err)
		}
		var doc document
		if err := json.Unmarshal(conf, &doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Storage.Root; got != tc.storage {
			t.Errorf("Dir %q: storage %q, want %q", tc.dir, got, tc.storage)
		}
		if got := doc.Logging.Logs["access"].Writer.Filename; got != tc.access {
			t.Errorf("Dir %q: access log %q, want %q", tc.dir, got, tc.access)
		}
	}
}

func TestValidateRejectsInboundSource(t *testing.T) {
	_, err := Config{Sidecar: proxytest.Pod()}.Render()
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:8080") {
		t.Errorf("Render() error %v, want the advice to forward to 127.0.0.1:8080", err)
	}
}

func TestConformance(t *testing.T) {
	needCaddy(t)
	proxytest.Run(t, proxytest.Profile{
		Name: "caddy",
		Start: func(ctx context.Context, s layout.Sidecar) (proxytest.Proxy, error) {
			return Start(ctx, Config{Sidecar: s, AccessLog: true})
		},
		Hash: proxytest.SHA256,
	})
}

// TestConformanceMetrics runs the suite with request counts read from Caddy's
// own counter (Metrics) instead of the access log.
func TestConformanceMetrics(t *testing.T) {
	needCaddy(t)
	proxytest.Run(t, proxytest.Profile{
		Name: "caddy",
		Start: func(ctx context.Context, s layout.Sidecar) (proxytest.Proxy, error) {
			return Start(ctx, Config{Sidecar: s, Metrics: true})
		},
		Hash: proxytest.SHA256,
	})
}

// TestMetricsRequests reads what Debian's caddy 2.6.2 served after 3
// requests to the outbound server, which it forwarded to the inbound
// one, and 1 more straight to the inbound one; the admin API's reads are
// another metric.
func TestMetricsRequests(t *testing.T) {
	f, err := os.Open("testdata/metrics-2.6.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := MetricsRequests(f); err != nil || n != 7 {
		t.Errorf("MetricsRequests = %d, %v; want inbound 4 + outbound 3", n, err)
	}
	const other = `# TYPE caddy_http_requests_total counter
caddy_http_requests_total{handler="reverse_proxy",server="inbound"} 5
caddy_http_requests_total{handler="headers",server="inbound"} 5
caddy_http_requests_total{handler="reverse_proxy",server="srv0"} 9
`
	for _, c := range []struct {
		text string
		want int64
		err  bool
	}{
		{other, 5, false}, // another handler, another server: not the sidecar's
		{"# TYPE go_goroutines gauge\ngo_goroutines 7\n", 0, false}, // no request yet
		{"", 0, true},
		{"<html>not metrics</html>\n", 0, true},
		{"# TYPE caddy_http_requests_total counter\ncaddy_http_requests_total{handler=\"reverse_proxy\",server=\"inbound\"} 1.5\n", 0, true},
	} {
		n, err := MetricsRequests(strings.NewReader(c.text))
		if n != c.want || (err != nil) != c.err {
			t.Errorf("MetricsRequests(%q) = %d, %v; want %d, error %v", c.text, n, err, c.want, c.err)
		}
	}
}

const accessText = `{"level":"info","logger":"http.log.access.sidecar","msg":"handled request","status":200}
{"level":"info","logger":"http.log.access.sidecar","msg":"handled request","status":200}
{"level":"info","logger":"tls","msg":"other"}
{"level":"info","logger":"http.log.access.sidecar","msg":"handled req`

func TestCountAccess(t *testing.T) {
	n, err := countAccess(strings.NewReader(accessText))
	if err != nil || n != 2 {
		t.Errorf("countAccess = %d, %v; want 2 (the partial last line is not counted)", n, err)
	}
	if _, err := countAccess(strings.NewReader("not json\n")); err == nil {
		t.Error("a bad line: no error")
	}
}

func FuzzCountAccess(f *testing.F) {
	f.Add(accessText)
	f.Add("")
	f.Add("{}\n")
	const access = `{"logger":"http.log.access.x","status":200}` + "\n"
	const other = `{"logger":"tls"}` + "\n"
	f.Fuzz(func(t *testing.T, s string) {
		n, err := countAccess(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whole lines after what was counted: an access line counts one
		// more, another logger's none, and a partial line (no newline
		// yet: Caddy still writing it) none.
		if !strings.HasSuffix(s, "\n") && s != "" {
			return // s ends in a partial line, which the next would extend
		}
		for _, c := range []struct {
			tail string
			want uint64
		}{{access, n + 1}, {other, n}, {access + access + other, n + 2}, {strings.TrimSuffix(access, "\n"), n}} {
			if got, err := countAccess(strings.NewReader(s + c.tail)); err != nil || got != c.want {
				t.Fatalf("%q + %q: %d, %v; want %d", s, c.tail, got, err, c.want)
			}
		}
	})
}
