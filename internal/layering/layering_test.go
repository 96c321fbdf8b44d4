package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rules says, for each room of the tree (the longest prefix wins), which of
// the project's packages its code may import: a package by its path, a
// package and everything under it by "path/...", anything by "...".
// Everything outside the module (the standard library, modules) is not
// this rule's business.
var rules = []struct {
	room  string
	may   []string
	never string // why a tempting import is left out, for the failure message
}{
	{room: "cmd", may: []string{"..."}},
	{room: "loadgen", may: []string{"loadgen/pace", "loadgen/protocol", "results/...", "internal/..."},
		never: "the engine imports pacing, the protocols' interface and results; not the CLI, meshes or targets"},
	{room: "loadgen/metrics", may: []string{"loadgen", "results/...", "internal/..."}},
	{room: "loadgen/sweep", may: []string{"loadgen", "loadgen/client", "loadgen/protocol", "loadgen/pace", "loadgen/mix", "results/...", "internal/..."}},
	{room: "loadgen/k8splan", may: []string{"loadgen/sweep", "meshes/k8s", "internal/..."},
		never: "the bridge of a sweep's plan to k8s run's: the sweep and the rendering only, not the cluster's rooms"},
	{room: "loadgen/study", may: []string{"loadgen/sweep", "loadgen/client", "results/...", "internal/..."}},
	{room: "loadgen/client", may: []string{"loadgen/protocol/...", "results/...", "internal/..."}},
	{room: "loadgen/mix", may: []string{"loadgen/protocol", "internal/..."}},
	{room: "loadgen/pace", may: []string{"internal/..."}},
	{room: "loadgen/protocol", may: []string{"loadgen/protocol", "loadgen/protocol/h2wire", "loadgen/protocol/h2conn", "internal/..."},
		never: "a protocol imports the protocols' interface and shared cores (h2wire, h2conn), never the engine, results or another protocol"},
	{room: "loadgen/protocol/h2conn/h2peer", may: []string{"loadgen/protocol/h2wire", "results", "internal/..."}},
	{room: "targets", may: []string{"targets/...", "internal/..."},
		never: "targets are servers loadgen aims at: they know nothing of the generator"},
	{room: "meshes", may: []string{"meshes/...", "targets/...", "results/...", "internal/..."},
		never: "meshes build real proxies and paths; they import targets and results, never the engine"},
	{room: "meshes/k8s", may: []string{"meshes/k8s/appmesh", "meshes/sidecar", "meshes/layout", "meshes/mtls", "meshes/nginxingress", "meshes/haproxy", "meshes/caddy", "meshes/leftover", "targets/...", "results/...", "internal/..."},
		never: "the rendering imports none of the rooms that talk to a cluster (cluster, cost, worker, run, paths)"},
	{room: "meshes/k8s/appmesh", may: []string{"internal/..."}},
	{room: "meshes/k8s/cluster", may: []string{"meshes/k8s", "targets/...", "results/...", "internal/..."}},
	{room: "meshes/k8s/cost", may: []string{"meshes/k8s", "meshes/k8s/cluster", "results/...", "internal/..."}},
	{room: "meshes/k8s/worker", may: []string{"meshes/k8s", "meshes/k8s/cluster", "meshes/leftover", "results/...", "internal/..."}},
	{room: "meshes/k8s/run", may: []string{"meshes/k8s", "meshes/k8s/appmesh", "meshes/k8s/cluster", "meshes/k8s/cost", "meshes/k8s/worker", "targets/...", "results/...", "internal/..."},
		never: "run and paths import the rendering, cluster, cost and worker, not each other"},
	{room: "meshes/k8s/paths", may: []string{"meshes/k8s", "meshes/k8s/cluster", "meshes/k8s/cost", "meshes/k8s/worker", "targets/...", "results/...", "internal/..."},
		never: "run and paths import the rendering, cluster, cost and worker, not each other"},
	{room: "meshes/k8s/e2e", may: []string{"..."}},
	{room: "results", may: []string{"results/...", "internal/..."},
		never: "results are plain data and what reads it: never the engine, protocols or meshes"},
	{room: "internal", may: []string{"internal/..."}},
	{room: "internal/ratecheck", may: []string{"internal/...", "results"}},
	{room: "internal/sidecarnames", may: []string{}, never: "the sidecar names are a leaf the meshes and the sweep share: it imports nothing of the project"},
	{room: "bench", may: []string{"internal/..."}},
	{room: "scripts", may: []string{}},
}

// allowed reports whether code of package pkg may import imp (both
// module-relative paths), and the rule's reason when not.
func allowed(pkg, imp string) (bool, string) {
	best := -1
	for i, r := range rules {
		if (pkg == r.room || strings.HasPrefix(pkg, r.room+"/")) && (best < 0 || len(r.room) > len(rules[best].room)) {
			best = i
		}
	}
	if best < 0 {
		return false, "the package is in no room of the layer rules: add it to docs/ARCHITECTURE.md and to this test"
	}
	r := rules[best]
	for _, p := range r.may {
		if sub, ok := strings.CutSuffix(p, "..."); ok && (sub == "" || imp == strings.TrimSuffix(sub, "/") || strings.HasPrefix(imp, sub)) {
			return true, ""
		}
		if imp == p {
			return true, ""
		}
	}
	why := r.never
	if why == "" {
		why = "room " + r.room + " may import " + strings.Join(r.may, ", ")
	}
	return false, why
}

const module = "loadgen"

// imports walks the tree under root and returns, for each package directory
// (module-relative), the project's packages its non-test Go files import.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if p == module || strings.HasPrefix(p, module+"/") {
				out[pkg] = append(out[pkg], strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository's root is not at %s: %v", root, err)
	}
	return root
}

// TestImportsFollowTheLayers fails on an import against the rules above.
func TestImportsFollowTheLayers(t *testing.T) {
	for pkg, imps := range imports(t, repoRoot(t)) {
		for _, imp := range imps {
			if ok, why := allowed(pkg, imp); !ok {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

// TestRulesCatchABackImport plants the imports the rules exist to stop.
func TestRulesCatchABackImport(t *testing.T) {
	for _, c := range [][2]string{
		{"results/report", "loadgen"},
		{"loadgen/protocol/http1", "loadgen"},
		{"loadgen", "cmd/loadgen"},
		{"targets/httpbin", "loadgen/protocol"},
		{"meshes/k8s/run", "meshes/k8s/paths"},
		{"meshes/k8s", "meshes/k8s/cluster"},
		{"newroom/x", "results"},
		{"internal/sidecarnames", "meshes/sidecar"},
		{"loadgen/sweep", "meshes/k8s"},
		{"meshes/k8s/run", "loadgen/sweep"},
		{"loadgen/k8splan", "meshes/k8s/run"},
	} {
		if ok, _ := allowed(c[0], c[1]); ok {
			t.Errorf("%s importing %s passes the rules", c[0], c[1])
		}
	}
	for _, c := range [][2]string{
		{"cmd/loadgen", "meshes/k8s/run"},
		{"loadgen", "loadgen/protocol"},
		{"loadgen/protocol/rpc", "loadgen/protocol/h2conn"},
		{"meshes/k8s/run", "meshes/k8s/cost"},
		{"loadgen/sweep", "internal/sidecarnames"},
		{"meshes/sidecar", "internal/sidecarnames"},
		{"loadgen/k8splan", "loadgen/sweep"},
		{"loadgen/k8splan", "meshes/k8s"},
	} {
		if ok, why := allowed(c[0], c[1]); !ok {
			t.Errorf("%s importing %s refused: %s", c[0], c[1], why)
		}
	}
}

// TestArchitectureListsEveryPackage checks that docs/ARCHITECTURE.md's layer
// list names every package of the tree (a room's line covers the packages
// under it only where the list says so with "/*" or "/...").
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Layers")
	end := strings.Index(doc[start:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("docs/ARCHITECTURE.md has no Layers section")
	}
	listed := map[string]bool{}
	wild := []string{}
	line := regexp.MustCompile(`(?m)^([a-z][a-z0-9/_.*-]*) +\S`)
	for _, m := range line.FindAllStringSubmatch(doc[start:start+end], -1) {
		name := m[1]
		if w, ok := strings.CutSuffix(name, "/*"); ok {
			wild = append(wild, w)
			continue
		}
		listed[name] = true
	}
	for pkg := range imports(t, root) {
		if pkg == "." || listed[pkg] || strings.HasPrefix(pkg, "meshes/k8s/e2e") || slices.ContainsFunc(wild, func(w string) bool { return strings.HasPrefix(pkg, w+"/") }) {
			continue
		}
		t.Errorf("docs/ARCHITECTURE.md's layer list does not name %s", pkg)
	}
}
