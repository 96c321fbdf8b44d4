package run

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"loadgen/internal/testport"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
)

// costSources are the ways a run reads its cost (k8s run's
// --prometheus, --no-metrics, --no-node-cost), whose permissions differ.
var costSources = []struct {
	name       string
	metrics    string
	noNodeCost bool
}{
	{"metrics-api", k8s.MetricsAPI, false},
	{"no-node-cost", k8s.MetricsAPI, true},
	{"prometheus", k8s.MetricsPrometheus, false},
	{"no-metrics", k8s.MetricsNone, false},
}

// TestRunCallsPermitted checks that a run's calls through the dynamic client
// (what the table's Dynamic rows cover: the rendering's server-side apply and
// cleanup, the classes, the gateways', ingresses' and App Mesh objects'
// status), through the typed one and metrics.k8s.io's, made on fake
// clients for each mesh and each cost source (metrics.k8s.io, without the
// nodes', Prometheus, none), are each granted by the permissions table;
// each Dynamic row of the mesh is called, and so is each row the cost
// source adds (metrics.k8s.io's, the pods across namespaces): the table
// asks for nothing the run does not do.
// (Server-side apply of an absent object is also checked for create by
// the API server, which a fake client does not record: the node test
// TestNodeRBAC runs a ServiceAccount bound to exactly these rules.)
func TestRunCallsPermitted(t *testing.T) {
	for _, o := range []k8s.Options{
		{Mesh: k8s.MeshNone}, {Mesh: k8s.MeshIstio, MTLS: true}, {Mesh: k8s.MeshIstioAmbient}, {Mesh: k8s.MeshIstioWaypoint},
		{Mesh: k8s.MeshLinkerd}, {Mesh: k8s.MeshAppMesh},
		{Mesh: k8s.MeshIngressNginx, ConfigureController: true, Routes: []string{k8s.RouteHTTP, k8s.RouteGRPC}},
		{Mesh: k8s.MeshIngress, Class: "traefik"},
		{Mesh: k8s.MeshGateway, Class: "eg", Routes: k8s.RouteKinds},
		{Mesh: k8s.MeshIstio, ControlPlane: []string{k8s.NoControlPlane}},
	} {
		o.Namespace = "bench"
		o, err := o.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		name := o.Mesh
		if len(o.ControlPlane) > 0 {
			name += "/no-control-plane"
		}
		t.Run(name, func(t *testing.T) { runCallsPermitted(t, o) })
	}
}

func runCallsPermitted(t *testing.T, o k8s.Options) {
	ctx := context.Background()
	ingressClass := func(name, ctl string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"controller": ctl}}}
	}
	gatewayClass := func(name string) *unstructured.Unstructured {
		return withConditions(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"controllerName": "x"}}}, map[string]string{"Accepted": "True"}, "")
	}
	k := &Coordinator{Options: o, TargetWait: time.Millisecond, Poll: time.Millisecond, Events: func(string, ...any) {}}
	objs, _, err := k.Objects()
	if err != nil {
		t.Fatal(err)
	}
	typed := twoNginxControllers()
	typed = append(typed, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k8s.IngressControllerConfigMap, Namespace: "ingress-nginx"}},
		enrolled(targetPod([]string{"http-httpbin"}, nil)), ztunnelIn("kube-system", "n1", true),
		// An ingress's or a gateway's proxy, at the address it publishes.
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "edge"},
			Spec: corev1.ServiceSpec{ClusterIP: "198.18.0.7", ClusterIPs: []string{"198.18.0.7"}, Selector: map[string]string{"app": "edge"}}},
		onNode(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "edge-1", Namespace: "edge", Labels: map[string]string{"app": "edge"}}}, "n2"))
	var dyn []*unstructured.Unstructured
	switch o.Mesh {
	case k8s.MeshAppMesh:
		dyn = appMeshObjects(t, o, nil)
	case k8s.MeshGateway:
		dyn = append(gatewayObjects(t, o, nil), gatewayClass(o.Class))
	case k8s.MeshIngressNginx, k8s.MeshIngress:
		dyn = []*unstructured.Unstructured{ingressClass("traefik", "traefik.io/ingress-controller"), ingressClass("nginx", "k8s.io/ingress-nginx")}
	}
	// The rendered objects as the cluster holds them once applied
	// (with the controllers' status where a check reads it).
	have := map[string]bool{}
	for _, u := range dyn {
		have[k8s.ObjectRef(u)] = true
	}
	for _, u := range objs {
		if !have[k8s.ObjectRef(u)] {
			dyn = append(dyn, u)
		}
	}
	k.Cluster = fakeCluster(t, typed, dyn...)
	// Apply, one object at a time (the fake dynamic client records
	// an apply patch whether or not it can apply it).
	for _, u := range objs {
		_ = k.Cluster.Apply(ctx, []*unstructured.Unstructured{u})
	}
	_ = k.checkClass(ctx)
	if o.Class != "" {
		missing := *k
		missing.Options.Class = "no-such-class"
		_ = missing.checkClass(ctx) // lists the classes the cluster has
	}
	_ = k.checkMesh(ctx)
	if o.Published() {
		for _, via := range []string{k8s.ViaService, k8s.ViaPublished} {
			v := *k
			v.Options.Via = via
			tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			_, _ = v.waitAddresses(tctx)
			cancel()
		}
	}
	if o.Mesh == k8s.MeshAppMesh {
		_ = k.checkAppMesh(ctx)
	}
	if o.Mesh == k8s.MeshGateway {
		_ = k.checkGateway(ctx)
	}
	if o.ConfigureController {
		k.Dir = t.TempDir()
		_, _ = k.configureController(ctx)
		_, _ = k.Cluster.RestoreControllers(ctx, o.Namespace, o.RunID, o.IngressNamespace)
	}
	_ = k.ingressWorkers(ctx)
	if _, err := k.Cluster.Cleanup(ctx, o.Namespace, o.RunID, cluster.RunKinds(objs)...); err != nil {
		t.Logf("cleanup: %v", err)
	}
	setup := apiActions(k.Cluster)
	// Then a step's cost, from each source (as k8s run builds its
	// watcher), over a window already past: the run's calls are the
	// setup's and the step's.
	for _, src := range costSources {
		t.Run(src.name, func(t *testing.T) {
			k.Cluster.Client.(*fake.Clientset).ClearActions()
			k.Cluster.Dynamic.(*dynamicfake.FakeDynamicClient).ClearActions()
			k.Options.Metrics, k.Options.NoNodeCost = src.metrics, src.noNodeCost
			o := k.Options
			metrics := metricsfake.NewSimpleClientset()
			switch o.Metrics {
			case k8s.MetricsAPI:
				k.Watcher = &cost.PodMetrics{Client: metrics, Every: time.Hour, Pods: cost.WatchedPods(k.Cluster)}
			case k8s.MetricsPrometheus:
				k.Watcher = &cost.Prometheus{URL: "http://" + testport.Closed(t), Pods: cost.WatchedPods(k.Cluster), MaxWait: time.Millisecond}
			default:
				k.Watcher = nil
			}
			k.proxies = nil
			k.findProxies(ctx, both("198.18.0.7"))
			collected := make(chan struct{})
			close(collected)
			now := time.Now()
			_ = k.sampleWindow(ctx, 0, now, cost.Window{From: now.Add(-time.Second), To: now, Measured: time.Second}, collected)
			_ = k.placement(ctx, 0, &batchv1.Job{})
			calls := append(slices.Clone(setup), apiActions(k.Cluster, metrics)...)
			assertPermitted(t, calls, o)
			assertCalled(t, calls, o)
		})
	}
}

// assertCalled wants each row the table grants a run with these options
// called: the Dynamic rows (the typed ones are held to the code by
// k8s.TestPermissionsMatchCalls), and the rows of the cost source, which
// only a run tells apart (metrics.k8s.io's, the pods across namespaces).
func assertCalled(t *testing.T, calls []apiAction, o k8s.Options) {
	t.Helper()
	called := map[[3]string]bool{}    // anywhere
	elsewhere := map[[3]string]bool{} // outside the run's namespace
	for _, a := range calls {
		called[[3]string{a.group, a.resource, a.verb}] = true
		if a.namespace != o.Namespace {
			elsewhere[[3]string{a.group, a.resource, a.verb}] = true
		}
	}
	perms, err := k8s.PermissionsFor(k8s.ForRun, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range perms {
		if !p.Dynamic && p.Group != "metrics.k8s.io" && !(p.Where == k8s.InEveryNamespace && slices.Contains(p.Resources, "pods")) {
			continue
		}
		for _, r := range p.Resources {
			for _, v := range p.Verbs {
				if v == "create" {
					continue // server-side apply: checked by the API server, not recorded by the fake
				}
				if r == "pods" && p.Dynamic && slices.Contains([]string{"list", "delete"}, v) {
					continue // cleanup's pods: none labelled in the fake, and the typed list covers list
				}
				switch {
				case !called[[3]string{p.Group, r, v}]:
					t.Errorf("row %q grants %s %s (group %q), which the run did not call", p.Why, v, r, p.Group)
				case p.Where == k8s.InEveryNamespace && !elsewhere[[3]string{p.Group, r, v}]:
					t.Errorf("row %q grants %s %s (group %q) in every namespace, and the run called it in its own only", p.Why, v, r, p.Group)
				}
			}
		}
	}
}
