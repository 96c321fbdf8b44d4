package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/store"
)

// TestNodeRBAC checks that `loadgen k8s run` and `loadgen k8s paths` run to
// the end on the real node as a ServiceAccount bound to exactly the roles
// `loadgen k8s rbac` prints for them (--bind), and nothing else: the
// permissions table is what the commands need. The paths run reads
// kube-proxy's mode from the ConfigMap the node publishes, through the
// kube-system Role, with no right to the kubelet's API.
func TestNodeRBAC(t *testing.T) {
	beside(t)
	n := testNode(t)
	bin := buildLoadgen(t)
	ctx := context.Background()
	const saNS, sa = "node-rbac-sa", "loadgen"
	if _, err := n.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: saNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Client.CoreV1().Namespaces().Delete(context.Background(), saNS, metav1.DeleteOptions{}) })
	if _, err := n.Client.CoreV1().ServiceAccounts(saNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	bindRBAC(t, n, bin, "k8s", "rbac", "--mesh", "none", "-n", "node-rbac-run", "--bind", saNS+"/"+sa)
	bindRBAC(t, n, bin, "k8s", "rbac", "--for", "paths", "-n", "node-rbac-paths", "--bind", saNS+"/"+sa)
	kubeconfig := saKubeconfig(t, n, saNS, sa)

	t.Run("run", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "results")
		sweep := writeNodeSweep(t, "ladder: c2t2", "duration: 2s",
			`paths: [{name: mesh, url: "http://target:8080"}, {name: direct, url: "http://target:8081", baseline: true}]`)
		// With metrics-server's figures (metrics.k8s.io), as a run takes by default.
		r := runLoadgen(t, bin, kubeconfig, 5*time.Minute, "k8s", "run", "--mesh", "none", "-n", "node-rbac-run", "-f", sweep,
			"--workers", "1", "-o", dir, "--image", n.Image, "--same-node-ok", "--start-lead", "8s", "--target-wait", "90s", "--run-id", "rbac")
		if r.code != 0 || strings.Contains(strings.ToLower(r.stderr), "forbidden") {
			t.Fatalf("k8s run as %s/%s: %v", saNS, sa, r)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 2 {
			t.Fatalf("%d steps, %v", len(steps), err)
		}
		for _, st := range steps {
			if st.Run == nil || st.Run.Summary.Requests == 0 {
				t.Errorf("step %s: %q", st.ID, st.Failed)
			}
		}
		noneLeftOn(t, n.Client, "node-rbac-run")
	})
	t.Run("paths", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "paths")
		r := runLoadgen(t, bin, kubeconfig, 8*time.Minute, "k8s", "paths", "-n", "node-rbac-paths", "-d", "1s", "--repeats", "1",
			"--tests", paths.TestTCPRR, "--paths", paths.PodPodSameNode, "--image", n.Image, "-o", dir, "--run-id", "rbacp", "-q")
		if r.code != 0 || strings.Contains(strings.ToLower(r.stderr), "forbidden") {
			t.Fatalf("k8s paths as %s/%s: %v", saNS, sa, r)
		}
		tab, err := paths.ReadTable(dir)
		if err != nil {
			t.Fatal(err)
		}
		if tab.KubeProxy.Mode != n.ProxyMode || !strings.Contains(tab.KubeProxy.Source, "ConfigMap kube-system/kube-proxy") {
			t.Errorf("kube-proxy %+v, want %s from the ConfigMap", tab.KubeProxy, n.ProxyMode)
		}
		for _, row := range tab.Rows {
			if row.Path == paths.PodPodSameNode && len(row.Figures) != 1 {
				t.Errorf("%s %s: %v %v", row.Path, row.Test, row.Figures, row.Failures)
			}
		}
		assertNothingLeft(t, n.Client, "node-rbac-paths", "rbacp")
	})
}

// bindRBAC applies what `loadgen k8s rbac …` prints, as an administrator
// does, and removes it when the test ends.
func bindRBAC(t *testing.T, n *node.Node, bin string, args ...string) {
	t.Helper()
	ctx := context.Background()
	r := runLoadgen(t, bin, n.Kubeconfig, time.Minute, args...)
	if r.code != 0 {
		t.Fatalf("loadgen %s: %v", strings.Join(args, " "), r)
	}
	objs, err := k8s.DecodeStrict([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	rb := n.Client.RbacV1()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			_, err = rb.ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rb.ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			_, err = rb.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rb.ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.Role:
			_, err = rb.Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rb.Roles(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.RoleBinding:
			_, err = rb.RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rb.RoleBindings(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		default:
			t.Fatalf("loadgen k8s rbac printed a %T", o)
		}
		if err != nil {
			t.Fatalf("apply %T: %v", o, err)
		}
	}
}

// saKubeconfig is a kubeconfig for the node's API server as the
// ServiceAccount, by a token the API server issues it.
func saKubeconfig(t *testing.T, n *node.Node, ns, sa string) string {
	t.Helper()
	tok, err := n.Client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientcmd.LoadFromFile(n.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cur := admin.Contexts[admin.CurrentContext]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["node"] = admin.Clusters[cur.Cluster]
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "node", AuthInfo: sa}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
