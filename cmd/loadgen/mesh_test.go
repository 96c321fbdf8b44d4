package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeshRenderEnvoy checks that the CLI writes exactly the golden
// bootstraps of meshes/envoy, YAML or JSON by the -o file's extension.
func TestMeshRenderEnvoy(t *testing.T) {
	for _, tc := range []struct{ layout, file, golden string }{
		{"istio", "envoy.yaml", "istio.yaml"},
		{"appmesh", "envoy.json", "appmesh.json"},
	} {
		out := filepath.Join(t.TempDir(), tc.file)
		if code, _, stderr := cli(t, "mesh", "render", "envoy", "--layout", tc.layout, "-o", out); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.layout, code, stderr)
		}
		got, _ := os.ReadFile(out)
		want, err := os.ReadFile(filepath.Join("..", "..", "meshes", "envoy", "testdata", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the rendered bootstrap differs from meshes/envoy/testdata/%s", tc.layout, tc.golden)
		}
	}
}

// TestMeshRenderStdout checks that -o - and /dev/stdout are standard
// output (writeOutput), not a file named - nor /dev/stdout truncated.
func TestMeshRenderStdout(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "meshes", "haproxy", "testdata", "pod.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, o := range []string{"-", "/dev/stdout"} {
		code, out, stderr := cli(t, "mesh", "render", "haproxy", "-o", o)
		if code != 0 || out != string(want) {
			t.Errorf("-o %s: exit %d, %d bytes on stdout, want %d: %s", o, code, len(out), len(want), stderr)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("-o - wrote a file named -")
	}
}

// TestMeshRenderProfiles checks that each proxy's sidecar layout, also with
// mTLS, is what its package's golden file holds.
func TestMeshRenderProfiles(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		golden string
	}{
		{[]string{"nginx"}, "nginxingress/testdata/sidecar-pod.conf"},
		{[]string{"nginx", "--workers", "4", "--mtls-dir", "/etc/loadgen/mtls"}, "nginxingress/testdata/sidecar-mtls.conf"},
		{[]string{"haproxy"}, "haproxy/testdata/pod.cfg"},
		{[]string{"haproxy", "--workers", "4", "--mtls-dir", "/etc/loadgen/mtls"}, "haproxy/testdata/mtls.cfg"},
		{[]string{"envoy", "--mtls-dir", "/etc/loadgen/mtls"}, "envoy/testdata/istio-mtls.yaml"},
		{[]string{"nginx", "--ingress", "--listen", "127.0.0.1:8080", "--upstream", "127.0.0.1:8081"}, "nginxingress/testdata/default.conf"},
	} {
		code, out, stderr := cli(t, append([]string{"mesh", "render"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, stderr)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "meshes", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("mesh render %s differs from meshes/%s:\n%s", strings.Join(tc.args, " "), tc.golden, out)
		}
	}
	// Caddy forwards inbound to 127.0.0.1 (it cannot bind 127.0.0.6), and
	// keeps its storage in the standalone run directory.
	if code, out, _ := cli(t, "mesh", "render", "caddy"); code != 0 || !strings.Contains(out, `"dial": "127.0.0.1:8080"`) ||
		!strings.Contains(out, `"root": "/var/lib/loadgen/caddy/storage"`) {
		t.Errorf("caddy: exit %d:\n%s", code, out)
	}
}

func TestMeshRenderBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"linkerd"}, `unknown proxy "linkerd"`},
		{[]string{"envoy", "--layout", "consul"}, `unknown layout "consul"`},
		{[]string{"haproxy", "--layout", "appmesh"}, "--layout is envoy's only"},
		{[]string{"haproxy", "--upstream", "httpbin:8000"}, `--upstream "httpbin:8000": want IP:PORT`},
		{[]string{"nginx", "--pod-ip", "x"}, `--pod-ip "x"`},
		{[]string{"envoy", "--inbound-source", "y"}, `--inbound-source "y"`},
		{[]string{"caddy", "--inbound-source", "127.0.0.7"}, "caddy: cannot bind"},
		{[]string{"envoy", "--workers", "-1"}, "workers must be"},
		{[]string{"haproxy", "--ingress"}, "--ingress is nginx's layout only"},
		{[]string{"nginx", "--ingress", "--upstream", "a;b:1"}, "character ';'"},
		{[]string{}, "accepts 1 arg"},
	} {
		code, _, stderr := cli(t, append([]string{"mesh", "render"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("mesh render %q: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestMeshCapturePrint checks that mesh capture's defaults are Istio's
// injector's, the local sidecars' table; its list flags are istio-iptables'
// -o and -q; bad lists are usage errors.
func TestMeshCapturePrint(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		golden string
	}{
		{nil, "istio-nat.rules"},
		{[]string{"--include-outbound-ip-ranges", "", "--include-outbound-ports", "8080", "--exclude-outbound-ports", "8081"}, "client-ports-nat.rules"},
		{[]string{"--exclude-outbound-ports", "8081", "--exclude-outbound-ip-ranges", "198.18.112.1/32", "--include-outbound-ip-ranges", "198.18.112.0/20"}, "ranges-nat.rules"},
	} {
		code, out, stderr := cli(t, append([]string{"mesh", "capture", "--print"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, stderr)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "meshes", "sidecar", "testdata", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("mesh capture %q differs from meshes/sidecar/testdata/%s:\n%s", tc.args, tc.golden, out)
		}
	}
	for _, args := range [][]string{
		{"--exclude-outbound-ports", "80,x"},
		{"--exclude-inbound-ports", "0"},
		{"--include-outbound-ip-ranges", "10.0.0.0/33"},
		{"--exclude-outbound-ip-ranges", "::1/128"},
		{"--inbound-port", "15001"},
	} {
		code, _, stderr := cli(t, append([]string{"mesh", "capture", "--print"}, args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, strings.TrimPrefix(args[0], "--")) && !strings.Contains(first, args[1]) {
			t.Errorf("%q: exit %d, want %d and the flag named: %s", args, code, exitUsage, stderr)
		}
	}
}
