package k8s

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// typedAccessors are client-go's typed accessors the code uses, by
// method name: the group and resource each one calls.
var typedAccessors = map[string][2]string{
	"Pods": {"", "pods"}, "Services": {"", "services"}, "ConfigMaps": {"", "configmaps"}, "Namespaces": {"", "namespaces"},
	"Nodes": {"", "nodes"}, "Events": {"", "events"}, "Secrets": {"", "secrets"},
	"Jobs": {"batch", "jobs"}, "Deployments": {"apps", "deployments"}, "DaemonSets": {"apps", "daemonsets"},
	"IngressClasses": {"networking.k8s.io", "ingressclasses"}, "Ingresses": {"networking.k8s.io", "ingresses"},
	"EndpointSlices": {"discovery.k8s.io", "endpointslices"}, "PodMetricses": {"metrics.k8s.io", "pods"},
	"NodeMetricses": {"metrics.k8s.io", "nodes"},
}

// typedVerbs are the accessors' methods that call the API server, and
// the RBAC verb of each.
var typedVerbs = map[string]string{"Get": "get", "List": "list", "Create": "create", "Delete": "delete", "Patch": "patch",
	"Update": "update", "Watch": "watch", "DeleteCollection": "deletecollection", "GetLogs": "get"}

// apiCall is one call the code makes: group, resource, verb, and where.
type apiCall struct {
	group, resource, verb string
	at                    string
}

// typedCalls walks the Go files of the packages that talk to a cluster
// and returns every typed client call: `….CoreV1().Pods(ns).List(…)`,
// and calls through a variable holding an accessor (`pods :=
// ….Pods(ns)` then `pods.Get(…)`).
func typedCalls(t *testing.T, dirs ...string) []apiCall {
	t.Helper()
	var out []apiCall
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				vars := map[string][2]string{} // a variable holding an accessor
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.AssignStmt:
						for i, rhs := range n.Rhs {
							if gr, ok := accessorOf(rhs, vars); ok && i < len(n.Lhs) {
								if id, ok := n.Lhs[i].(*ast.Ident); ok {
									vars[id.Name] = gr
								}
							}
						}
					case *ast.CallExpr:
						sel, ok := n.Fun.(*ast.SelectorExpr)
						if !ok {
							return true
						}
						verb, ok := typedVerbs[sel.Sel.Name]
						if !ok {
							return true
						}
						gr, ok := accessorOf(sel.X, vars)
						if !ok {
							return true
						}
						res := gr[1]
						if sel.Sel.Name == "GetLogs" {
							res = "pods/log"
						}
						out = append(out, apiCall{gr[0], res, verb, fset.Position(n.Pos()).String()})
					}
					return true
				})
			}
		}
	}
	return out
}

// accessorOf tells whether an expression is a typed accessor: a call of
// one (….Pods(ns)) or a variable holding one.
func accessorOf(e ast.Expr, vars map[string][2]string) ([2]string, bool) {
	switch e := e.(type) {
	case *ast.Ident:
		gr, ok := vars[e.Name]
		return gr, ok
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			gr, ok := typedAccessors[sel.Sel.Name]
			return gr, ok
		}
	}
	return [2]string{}, false
}

// clusterPackages are the packages whose code calls the API server.
var clusterPackages = []string{"cluster", "cost", "worker", "run", "paths"}

// TestPermissionsMatchCalls holds the table to the code, both ways:
// every typed call of the code that talks to a cluster is granted by a
// row of the table (for the command whose code it is, or any command
// for the shared packages), and every row of a typed resource has a call
// (the table asks for nothing the code does not do). The rows of kinds
// reached through the dynamic client (the rendering's, the gateways',
// App Mesh's) are held to the calls the run's tests record on fake
// clients (run.TestRunCallsPermitted).
func TestPermissionsMatchCalls(t *testing.T) {
	calls := typedCalls(t, clusterPackages...)
	if len(calls) < 20 {
		t.Fatalf("%d typed calls found: the walk misses them", len(calls))
	}
	granted := func(c apiCall, cmd string) bool {
		for _, p := range Permissions {
			if !slices.Contains(p.For, cmd) && cmd != "" {
				continue
			}
			if p.Rendered {
				continue // the dynamic client's
			}
			if p.Group == c.group && slices.Contains(p.Resources, c.resource) && slices.Contains(p.Verbs, c.verb) {
				return true
			}
		}
		return false
	}
	used := map[string]bool{}
	for _, c := range calls {
		cmd := ""
		switch {
		case strings.Contains(c.at, "/run/"):
			cmd = ForRun
		case strings.Contains(c.at, "/paths/"):
			cmd = ForPaths
		}
		if !granted(c, cmd) {
			t.Errorf("%s: %s %s (group %q) is in no row of the table for %q", c.at, c.verb, c.resource, c.group, cmd)
		}
		used[c.group+"|"+c.resource+"|"+c.verb] = true
	}
	for _, p := range Permissions {
		if p.Dynamic {
			continue // run.TestRunCallsPermitted: the calls the fake dynamic client records
		}
		for _, r := range p.Resources {
			for _, v := range p.Verbs {
				if used[p.Group+"|"+r+"|"+v] {
					continue
				}
				t.Errorf("row %q: %s %s (group %q) has no call in the code: the table asks for more than loadgen does", p.Why, v, r, p.Group)
			}
		}
	}
}

// TestNoNodeProxy checks that no command asks for the kubelet's API through
// the API server (nodes/proxy), and no code calls it.
func TestNoNodeProxy(t *testing.T) {
	for _, p := range Permissions {
		for _, r := range p.Resources {
			if strings.HasPrefix(r, "nodes/") {
				t.Errorf("row %q asks for %s", p.Why, r)
			}
		}
	}
	for _, dir := range clusterPackages {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `SubResource("proxy")`) {
				t.Errorf("%s calls a proxy subresource", f)
			}
		}
	}
}

// TestRBACRendered checks what `loadgen k8s rbac` prints for a mesh: a
// ClusterRole, a Role per namespace that exists before the run, the
// bindings with --bind; what each mesh needs and nothing of another's.
func TestRBACRendered(t *testing.T) {
	rules := func(objs []runtime.Object) (cluster []rbacv1.PolicyRule, roles map[string][]rbacv1.PolicyRule) {
		roles = map[string][]rbacv1.PolicyRule{}
		for _, o := range objs {
			switch r := o.(type) {
			case *rbacv1.ClusterRole:
				cluster = r.Rules
			case *rbacv1.Role:
				roles[r.Namespace] = r.Rules
			}
		}
		return cluster, roles
	}
	has := func(rs []rbacv1.PolicyRule, group, resource, verb string) bool {
		return slices.ContainsFunc(rs, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	objs, err := RBAC(RBACOptions{Options: Options{Mesh: MeshIngressNginx, Namespace: "bench", ConfigureController: true}, Bind: "ops/loadgen"})
	if err != nil {
		t.Fatal(err)
	}
	cl, roles := rules(objs)
	for _, w := range [][3]string{{"apps", "deployments", "create"}, {"networking.k8s.io", "ingresses", "patch"}, {"", "secrets", "create"},
		{"networking.k8s.io", "ingressclasses", "get"}, {"batch", "jobs", "create"}, {"", "pods/log", "get"}} {
		if !has(cl, w[0], w[1], w[2]) {
			t.Errorf("ingress-nginx: the ClusterRole lacks %s %s/%s", w[2], w[0], w[1])
		}
	}
	if !has(roles["ingress-nginx"], "", "configmaps", "patch") || !has(roles["ingress-nginx"], "", "pods", "list") {
		t.Errorf("ingress-nginx: the controller namespace's Role %+v", roles["ingress-nginx"])
	}
	for _, no := range [][3]string{{"", "nodes", "list"}, {"appmesh.k8s.aws", "meshes", "get"}, {"gateway.networking.k8s.io", "gateways", "get"}} {
		if has(cl, no[0], no[1], no[2]) {
			t.Errorf("ingress-nginx: the ClusterRole grants %s %s/%s, which the run does not call", no[2], no[0], no[1])
		}
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	sort.Strings(kinds)
	if want := []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}; !slices.Equal(kinds, want) {
		t.Errorf("objects %v, want %v", kinds, want)
	}
	// The namespace's own rights name it.
	for _, r := range cl {
		if slices.Contains(r.Resources, "namespaces") && slices.Contains(r.Verbs, "delete") && !slices.Equal(r.ResourceNames, []string{"bench"}) {
			t.Errorf("namespaces delete for %v, want the run's only", r.ResourceNames)
		}
	}
	pathsObjs, err := RBAC(RBACOptions{For: ForPaths, Options: Options{Namespace: "loadgen-paths"}})
	if err != nil {
		t.Fatal(err)
	}
	pcl, proles := rules(pathsObjs)
	if !has(pcl, "", "nodes", "list") || !has(proles["kube-system"], "", "configmaps", "get") || has(pcl, "", "nodes/proxy", "get") {
		t.Errorf("paths: cluster %+v, kube-system %+v", pcl, proles["kube-system"])
	}
	if _, err := RBAC(RBACOptions{For: "deploy"}); err == nil {
		t.Error("--for deploy accepted")
	}
	// The cost source (k8s run's --prometheus, --no-metrics,
	// --no-node-cost): metrics.k8s.io's pods and nodes only for a run that
	// reads them.
	for _, tc := range []struct {
		metrics          string
		noNodeCost       bool
		podMetrics, node bool
	}{
		{"", false, true, true}, {MetricsAPI, true, true, false},
		{MetricsPrometheus, false, false, false}, {MetricsNone, false, false, false}, {MetricsNone, true, false, false},
	} {
		objs, err := RBAC(RBACOptions{Options: Options{Mesh: MeshIstio, Metrics: tc.metrics, NoNodeCost: tc.noNodeCost}})
		if err != nil {
			t.Fatal(err)
		}
		cl, _ := rules(objs)
		if has(cl, "metrics.k8s.io", "pods", "list") != tc.podMetrics || has(cl, "metrics.k8s.io", "nodes", "get") != tc.node {
			t.Errorf("metrics %q, no node cost %v: pods' metrics %v, nodes' %v, want %v and %v", tc.metrics, tc.noNodeCost,
				has(cl, "metrics.k8s.io", "pods", "list"), has(cl, "metrics.k8s.io", "nodes", "get"), tc.podMetrics, tc.node)
		}
		if !has(cl, "", "pods", "list") || !has(cl, "batch", "jobs", "create") {
			t.Errorf("metrics %q: the run's own rows are gone: %+v", tc.metrics, cl)
		}
	}
	if _, err := RBAC(RBACOptions{Options: Options{Metrics: "statsd"}}); err == nil {
		t.Error("metrics source statsd accepted")
	}
}

// TestRBACNamespace: the roles name the command's namespace, its default
// when none is given: k8s paths' own for --for paths, the comparison's
// for the others.
func TestRBACNamespace(t *testing.T) {
	for _, tc := range []struct {
		command, ns, want string
	}{
		{"", "", DefaultNamespace},
		{ForRun, "", DefaultNamespace},
		{ForCleanup, "", DefaultNamespace},
		{ForPaths, "", "loadgen-paths"},
		{ForPaths, "bench", "bench"},
		{ForRun, "bench", "bench"},
	} {
		objs, err := RBAC(RBACOptions{For: tc.command, Options: Options{Namespace: tc.ns}})
		if err != nil {
			t.Fatalf("--for %q -n %q: %v", tc.command, tc.ns, err)
		}
		var named []string
		for _, o := range objs {
			if cr, ok := o.(*rbacv1.ClusterRole); ok {
				for _, r := range cr.Rules {
					if slices.Contains(r.Resources, "namespaces") && slices.Contains(r.Verbs, "delete") {
						named = r.ResourceNames
					}
				}
			}
		}
		if !slices.Equal(named, []string{tc.want}) {
			t.Errorf("--for %q -n %q: the namespace's rules name %v, want %s", tc.command, tc.ns, named, tc.want)
		}
	}
}
