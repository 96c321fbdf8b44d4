package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MetricsServerModule is metrics-server at the version built, from its
// own module. CoreDNS is built from its module too, at the version
// node/coredns/go.mod names, with the plugins the node uses.
const MetricsServerModule = "sigs.k8s.io/metrics-server/cmd/metrics-server@v0.8.0"

// KubernetesVersion is the k8s.io/kubernetes this module requires.
const KubernetesVersion = "v1.35.4"

// versionFlags stamp the components with their version, as Kubernetes'
// own build does (hack/lib/version.sh): the API server's /version and the
// kubelet's node status then say v1.35.4, not v0.0.0-master.
func versionFlags() string {
	v := strings.TrimPrefix(KubernetesVersion, "v")
	parts := strings.SplitN(v, ".", 3)
	var b strings.Builder
	b.WriteString("-s -w")
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
			pkg, KubernetesVersion, pkg, parts[0], pkg, parts[1], pkg)
	}
	return b.String()
}

// kubernetesTools are the components built from this module's tool
// lines (go.mod): the Kubernetes version it requires, with its replaces.
var kubernetesTools = []struct{ name, pkg string }{
	{"etcd", "go.etcd.io/etcd/server/v3"},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"},
	{"kubelet", "k8s.io/kubernetes/cmd/kubelet"},
	{"kube-proxy", "k8s.io/kubernetes/cmd/kube-proxy"},
	{"kubectl", "k8s.io/kubernetes/cmd/kubectl"},
}

// Bins are the built components, in Dir.
type Bins struct {
	Dir string
	// Loadgen and Pause are the static binaries the images hold.
	Loadgen, Pause string
}

func (b *Bins) path(name string) string { return filepath.Join(b.Dir, name) }

// BuildOptions say where the sources are and where builds are kept.
type BuildOptions struct {
	// Module is this module's directory (meshes/k8s/e2e); the main
	// module is two levels up. Default: found from the working directory.
	Module string
	// Cache keeps the builds between runs (default the user's cache
	// directory, loadgen-node). A build is made again only when go.mod,
	// go.sum or the Go version change.
	Cache string
	Log   io.Writer
	// Nice builds at the lowest CPU priority (nice 19): a build made in
	// the background of tests takes only the CPU their waits leave idle.
	Nice bool
}

// Build builds what the node runs, or finds it built: the Kubernetes
// components and etcd (from this module's go.mod), CoreDNS and
// metrics-server (from their own modules, at the versions above, without
// cgo), and the static loadgen and pause binaries for the images (made
// again each time: a few seconds when the Go build cache is warm).
func Build(ctx context.Context, o BuildOptions) (*Bins, error) {
	say := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "node build: "+format+"\n", a...)
		}
	}
	mod, err := moduleDir(o.Module)
	if err != nil {
		return nil, err
	}
	cache, err := cacheDir(o.Cache)
	if err != nil {
		return nil, err
	}
	key, err := buildKey(mod)
	if err != nil {
		return nil, err
	}
	b := &Bins{Dir: filepath.Join(cache, key)}
	stamp := filepath.Join(b.Dir, ".built")
	if _, err := os.Stat(stamp); err != nil {
		if err := os.MkdirAll(b.Dir, 0o755); err != nil {
			return nil, err
		}
		start := time.Now()
		say("building the Kubernetes components, etcd, CoreDNS and metrics-server into %s (a cold build takes 10 to 20 minutes)", b.Dir)
		t0 := time.Now()
		var pkgs []string
		for _, t := range kubernetesTools[1:] {
			pkgs = append(pkgs, t.pkg)
		}
		// One go command for the Kubernetes components: they share most
		// packages, and link in parallel.
		if err := goTool(ctx, mod, nil, append([]string{"build", "-ldflags", versionFlags(), "-o", b.Dir + "/"}, pkgs...)...); err != nil {
			return nil, err
		}
		if err := goTool(ctx, mod, nil, "build", "-ldflags", "-s -w", "-o", b.path("etcd"), kubernetesTools[0].pkg); err != nil {
			return nil, err
		}
		say("Kubernetes %s components and etcd built in %v", KubernetesVersion, time.Since(t0).Round(time.Second))
		t0 = time.Now()
		if err := goTool(ctx, filepath.Join(mod, "node", "coredns"), []string{"CGO_ENABLED=0"}, "build", "-ldflags", "-s -w", "-o", b.path("coredns"), "."); err != nil {
			return nil, err
		}
		say("CoreDNS built in %v", time.Since(t0).Round(time.Second))
		t0 = time.Now()
		// go install of a module at a version builds it with its own
		// go.mod, outside this one's; metrics-server's default build links
		// cgo, which a static binary does without.
		if err := goTool(ctx, os.TempDir(), []string{"GOBIN=" + b.Dir, "CGO_ENABLED=0"}, "install", "-ldflags", "-s -w", MetricsServerModule); err != nil {
			return nil, err
		}
		say("%s built in %v", MetricsServerModule, time.Since(t0).Round(time.Second))
		if err := os.WriteFile(stamp, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
			return nil, err
		}
		say("built in %v", time.Since(start).Round(time.Second))
	} else {
		say("using the builds in %s", b.Dir)
	}
	images := filepath.Join(b.Dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		return nil, err
	}
	b.Loadgen = filepath.Join(images, "loadgen")
	static := []string{"CGO_ENABLED=0"}
	if err := goTool(ctx, filepath.Join(mod, "..", "..", ".."), static, "build", "-trimpath", "-ldflags", "-s -w", "-o", b.Loadgen, "./cmd/loadgen"); err != nil {
		return nil, err
	}
	b.Pause = filepath.Join(images, "pause")
	if err := goTool(ctx, mod, static, "build", "-trimpath", "-ldflags", "-s -w", "-o", b.Pause, "./node/pause"); err != nil {
		return nil, err
	}
	return b, nil
}

// cacheDir is where builds are kept: given, or the user's cache
// directory's loadgen-node.
func cacheDir(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	uc, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(uc, "loadgen-node"), nil
}

// moduleDir is this module's directory: given, or the nearest parent of
// the working directory whose go.mod is this module's.
func moduleDir(given string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module loadgen/meshes/k8s/e2e\n") {
			return d, nil
		}
		if e := filepath.Join(d, "meshes", "k8s", "e2e"); d != e {
			if b, err := os.ReadFile(filepath.Join(e, "go.mod")); err == nil && strings.Contains(string(b), "module loadgen/meshes/k8s/e2e\n") {
				return e, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no meshes/k8s/e2e module above %s", wd)
		}
	}
}

// buildKey names a build by what decides it: this module's go.mod and
// go.sum, CoreDNS's, the Go version and metrics-server's version.
func buildKey(mod string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "node/coredns/go.sum", "node/coredns/main.go"} {
		b, err := os.ReadFile(filepath.Join(mod, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	v, err := exec.Command(goCommand(), "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	fmt.Fprintf(h, "%s\n%s\n", strings.TrimSpace(string(v)), MetricsServerModule)
	return strings.TrimSpace(string(v)) + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// goCommand is the go command: on PATH, or the running one's.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go" // where the Makefile puts Go on PATH
}

func goTool(ctx context.Context, dir string, env []string, args ...string) error {
	return goToolNice(ctx, false, dir, env, args...)
}

// goToolNice is goTool, at the lowest CPU priority (nice 19) when nice.
func goToolNice(ctx context.Context, nice bool, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, goCommand(), args...)
	if nice {
		cmd = exec.CommandContext(ctx, "nice", append([]string{"-n", "19", goCommand()}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		return fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}
