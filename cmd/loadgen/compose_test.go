package main

import (
	"context"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"loadgen/meshes/envoy"
	"loadgen/meshes/layout"
)

var update = flag.Bool("update", false, "rewrite the generated files the tests compare against (examples/compose)")

// repoRoot is where docker-compose.yml lives.
const repoRoot = "../.."

// composeConfigs are the files docker-compose.yml mounts that loadgen
// generates, what each is for, and the command lines that generate them
// (also written in the compose file's comment).
var composeConfigs = []struct {
	file, purpose string
	args          []string
}{
	{"examples/compose/nginx.conf", "docker-compose.yml's ingress: nginx in front of the httpbin target (service nginx).",
		[]string{"mesh", "render", "nginx", "--ingress", "--listen", "0.0.0.0:8080", "--upstream", "198.18.100.10:8000"}},
	{"examples/compose/envoy.yaml", "docker-compose.yml's sidecar: Envoy with Istio's bootstrap in front of the httpbin target (service envoy).",
		[]string{"mesh", "render", "envoy", "--layout", "istio", "--pod-ip", "198.18.100.12",
			"--app", "198.18.100.10:8000", "--inbound-source", "none", "--upstream", "198.18.100.10:8000"}},
}

// composeHeader is the comment a generated config opens with: what it is
// for, how it runs and the command whose output follows.
func composeHeader(purpose string, args []string) string {
	return "# " + purpose + "\n# It runs in: docker compose up --build\n" +
		"# What follows is what this command prints (go test ./cmd/loadgen -run Compose -update rewrites it):\n" +
		"#   loadgen " + strings.Join(args, " ") + "\n"
}

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) { o.SetProjectName("loadgen", true) })
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// TestComposeFile checks that docker-compose.yml is a valid Compose file (the
// compose-spec schema and its consistency checks) with the four services,
// every file it mounts is in the repository, and every address is in
// 198.18.0.0/15.
func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	names := p.ServiceNames()
	slices.Sort(names)
	if want := []string{"envoy", "httpbin", "loadgen", "nginx"}; !slices.Equal(names, want) {
		t.Errorf("services %v, want %v", names, want)
	}
	root, _ := filepath.Abs(repoRoot)
	bench := netip.MustParsePrefix("198.18.0.0/15")
	mounts := 0
	for name, svc := range p.Services {
		for _, v := range svc.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			mounts++
			rel, err := filepath.Rel(root, v.Source)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s mounts %s, outside the repository", name, v.Source)
				continue
			}
			if fi, err := os.Stat(v.Source); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s mounts %s: %v", name, rel, err)
			}
			if !v.ReadOnly {
				t.Errorf("%s mounts %s read-write", name, rel)
			}
		}
		for _, n := range svc.Networks {
			if ip, err := netip.ParseAddr(n.Ipv4Address); err != nil || !bench.Contains(ip) {
				t.Errorf("%s has address %q, outside 198.18.0.0/15", name, n.Ipv4Address)
			}
		}
	}
	if mounts != 3 {
		t.Errorf("%d files mounted, want 3 (nginx.conf, envoy.yaml, sweep.yaml)", mounts)
	}
	if !slices.ContainsFunc(p.Services["loadgen"].Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Type == types.VolumeTypeVolume && v.Source == "results" && v.Target == "/results"
	}) {
		t.Error("loadgen's results are not in the volume results at /results")
	}
	if b := p.Services["httpbin"].Build; b == nil || b.Context != root {
		t.Errorf("httpbin is not built from the repository's Dockerfile: %+v", b)
	}
}

// TestComposeConfigsGenerated checks that the mounted proxy configs are
// exactly what loadgen mesh render prints (go test -update rewrites them),
// and the Envoy service runs envoy as loadgen would.
func TestComposeConfigsGenerated(t *testing.T) {
	for _, c := range composeConfigs {
		code, out, stderr := cli(t, c.args...)
		if code != 0 {
			t.Fatalf("loadgen %s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
		}
		out = composeHeader(c.purpose, c.args) + out
		path := filepath.Join(repoRoot, c.file)
		if *update {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != out {
			t.Errorf("%s is not its header and what loadgen %s prints (go test ./cmd/loadgen -run Compose -update)", c.file, strings.Join(c.args, " "))
		}
	}
	p := loadCompose(t)
	got := []string(p.Services["envoy"].Command)
	want := append([]string{"envoy"}, envoy.Pod(envoy.Istio, netip.MustParseAddr("198.18.100.12"), mustSidecar(t)).Args("/etc/envoy/envoy.yaml")...)
	if !slices.Equal(got, want) {
		t.Errorf("the envoy service runs %q, want %q", got, want)
	}
	if !strings.Contains(strings.Join(p.Services["loadgen"].Command, " "), "/etc/loadgen/sweep.yaml") {
		t.Errorf("the loadgen service does not run the mounted sweep: %q", p.Services["loadgen"].Command)
	}
}

func mustSidecar(t *testing.T) layout.Sidecar {
	t.Helper()
	r := meshRender{podIP: "198.18.100.12", appPort: 8080, app: "198.18.100.10:8000", upstream: "198.18.100.10:8000", inboundSource: "none", layout: "istio"}
	s, err := r.sidecar("envoy")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestComposeSweepDryRuns checks that the sweep the loadgen service runs is
// valid.
func TestComposeSweepDryRuns(t *testing.T) {
	code, out, stderr := cli(t, "sweep", "-f", filepath.Join(repoRoot, "examples/compose/sweep.yaml"), "--dry-run")
	if code != 0 {
		t.Fatalf("sweep --dry-run: exit %d: %s", code, stderr)
	}
	out += stderr
	for _, want := range []string{"3 paths", "http://198.18.100.10:8000", "http://198.18.100.11:8080", "http://198.18.100.12:15006"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sweep's plan lacks %q:\n%s", want, out)
		}
	}
}
