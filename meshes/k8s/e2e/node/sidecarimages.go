package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The sidecars' images are made here from Debian's binaries and the
// shared libraries each one links (ldd), FROM scratch: nothing can be
// pulled on this machine. The loadgen image carries Debian's iptables the
// same way, for `loadgen mesh capture` in a pod's init container.

// ProxyRepo is the repository of a sidecar proxy's image on the node:
// loadgen.local/nginx, loadgen.local/haproxy, loadgen.local/caddy.
func ProxyRepo(proxy string) string { return "loadgen.local/" + proxy }

// proxyBinaries are where Debian installs each proxy.
var proxyBinaries = map[string]string{
	"nginx":   "/usr/sbin/nginx",
	"haproxy": "/usr/sbin/haproxy",
	"caddy":   "/usr/bin/caddy",
}

// imageEnv is every image's environment: binaries on PATH, libraries
// where ldd found them.
var imageEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64",
}

// iptablesMulti is Debian's iptables (nft backend), one binary for all
// its commands; its extensions are loaded from xtablesDir.
const (
	iptablesMulti = "/usr/sbin/xtables-nft-multi"
	xtablesDir    = "/usr/lib/x86_64-linux-gnu/xtables"
)

// loadgenImage is the loadgen binary at /loadgen, its entrypoint, with
// iptables-restore beside it.
func loadgenImage(dir, bin string) (image, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return image{}, err
	}
	files, err := iptablesFiles()
	if err != nil {
		return image{}, err
	}
	files = append(files, imageFile{path: "/loadgen", data: exe, mode: 0o755})
	return writeImageFiles(dir, LoadgenRepo, files,
		ocispec.ImageConfig{Entrypoint: []string{"/loadgen"}, User: loadgenUser, WorkingDir: "/", Env: imageEnv})
}

// iptablesFiles are xtables-nft-multi, its libraries and extensions, and
// the commands loadgen runs, linked to it (it acts by its name).
func iptablesFiles() ([]imageFile, error) {
	files, err := binaryFiles(iptablesMulti)
	if err != nil {
		return nil, fmt.Errorf("iptables for the loadgen image (apt-get install iptables): %w", err)
	}
	for _, cmd := range []string{"iptables", "iptables-restore", "iptables-save"} {
		files = append(files, imageFile{path: "/usr/sbin/" + cmd, link: filepath.Base(iptablesMulti)})
	}
	exts, err := filepath.Glob(filepath.Join(xtablesDir, "*.so"))
	if err != nil || len(exts) == 0 {
		return nil, fmt.Errorf("iptables' extensions: none in %s", xtablesDir)
	}
	for _, e := range exts {
		b, err := os.ReadFile(e)
		if err != nil {
			return nil, err
		}
		files = append(files, imageFile{path: e, data: b, mode: 0o644})
	}
	return files, nil
}

// binaryFiles are bin and every shared library it loads, as ldd lists
// them (the loader at the path the binary names), read through symbolic
// links.
func binaryFiles(bin string) ([]imageFile, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	files := []imageFile{{path: bin, data: exe, mode: 0o755}}
	out, err := run(context.Background(), "ldd", bin)
	if err != nil {
		if strings.Contains(out, "not a dynamic executable") {
			return files, nil
		}
		return nil, err
	}
	libs, err := lddPaths(out)
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	for _, l := range libs {
		b, err := os.ReadFile(l)
		if err != nil {
			return nil, err
		}
		files = append(files, imageFile{path: l, data: b, mode: 0o755})
	}
	return files, nil
}

// lddPaths reads ldd's output: "libc.so.6 => /lib/.../libc.so.6 (0x…)"
// and the loader's "/lib64/ld-linux-x86-64.so.2 (0x…)"; the vDSO has no
// file. A library ldd could not find is an error.
func lddPaths(out string) ([]string, error) {
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[1] == "=>" && f[2] == "not":
			return nil, fmt.Errorf("%s not found", f[0])
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			paths = append(paths, f[2])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			paths = append(paths, f[0])
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// proxyImage is a proxy's image: its binary and libraries, run as
// Istio's proxy user (the pods set it too).
func proxyImage(dir, proxy string) (image, error) {
	bin, ok := proxyBinaries[proxy]
	if !ok {
		return image{}, fmt.Errorf("no image for proxy %q", proxy)
	}
	files, err := binaryFiles(bin)
	if err != nil {
		return image{}, fmt.Errorf("%s for its image (apt-get install %s): %w", proxy, proxy, err)
	}
	return writeImageFiles(dir, ProxyRepo(proxy), files,
		ocispec.ImageConfig{Entrypoint: []string{bin}, User: "1337:1337", WorkingDir: "/", Env: imageEnv})
}

// SidecarImages makes the images of nginx, HAProxy and Caddy from this
// machine's binaries and imports them into every member's containerd;
// it returns each proxy's image reference, for k8s run's --proxy-image.
func (n *Node) SidecarImages(ctx context.Context) (map[string]string, error) {
	refs := map[string]string{}
	for _, proxy := range []string{"nginx", "haproxy", "caddy"} {
		im, err := proxyImage(n.Dir, proxy)
		if err != nil {
			return nil, err
		}
		for _, m := range n.Members {
			if _, err := run(ctx, "ctr", "--address", n.mpaths(m).containerdSock, "-n", "k8s.io", "images", "import", "--no-unpack=false", im.archive); err != nil {
				return nil, fmt.Errorf("importing %s: %w", im.ref, err)
			}
		}
		refs[proxy] = im.ref
	}
	return refs, nil
}
