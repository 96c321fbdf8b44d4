package run

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// TestRunCallsPermitted: a run's calls through the dynamic client (what
// the table's Dynamic rows cover: the rendering's server-side apply and
// cleanup, the classes, the gateways', ingresses' and App Mesh objects'
// status) and through the typed one, made on fake clients for each mesh,
// are each granted by the permissions table, and each Dynamic row of the
// mesh is called: the table asks for nothing the run does not do.
// (Server-side apply of an absent object is also checked for create by
// the API server, which a fake client does not record: the node test
// TestNodeRBAC runs a ServiceAccount bound to exactly these rules.)
func TestRunCallsPermitted(t *testing.T) {
	ctx := context.Background()
	ingressClass := func(name, ctl string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"controller": ctl}}}
	}
	gatewayClass := func(name string) *unstructured.Unstructured {
		return withConditions(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"controllerName": "x"}}}, map[string]string{"Accepted": "True"}, "")
	}
	for _, o := range []k8s.Options{
		{Mesh: k8s.MeshNone}, {Mesh: k8s.MeshIstio, MTLS: true}, {Mesh: k8s.MeshIstioAmbient}, {Mesh: k8s.MeshIstioWaypoint},
		{Mesh: k8s.MeshLinkerd}, {Mesh: k8s.MeshAppMesh},
		{Mesh: k8s.MeshIngressNginx, ConfigureController: true, Routes: []string{k8s.RouteHTTP, k8s.RouteGRPC}},
		{Mesh: k8s.MeshIngress, Class: "traefik"},
		{Mesh: k8s.MeshGateway, Class: "eg", Routes: k8s.RouteKinds},
	} {
		o.Namespace = "bench"
		o, err := o.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(o.Mesh, func(t *testing.T) {
			k := &Coordinator{Options: o, TargetWait: time.Millisecond, Poll: time.Millisecond, Events: func(string, ...any) {}}
			objs, _, err := k.Objects()
			if err != nil {
				t.Fatal(err)
			}
			typed := twoNginxControllers()
			typed = append(typed, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k8s.IngressControllerConfigMap, Namespace: "ingress-nginx"}},
				enrolled(targetPod([]string{"http-httpbin"}, nil)), ztunnelIn("kube-system", "n1", true))
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
				_, _ = k.proxyWatches(ctx, both("198.18.0.7"))
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
			assertPermitted(t, k.Cluster, o)

			called := map[[3]string]bool{}
			for _, a := range apiActions(k.Cluster) {
				called[[3]string{a.group, a.resource, a.verb}] = true
			}
			perms, err := k8s.PermissionsFor(k8s.ForRun, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range perms {
				if !p.Dynamic {
					continue // the typed calls: k8s.TestPermissionsMatchCalls
				}
				for _, r := range p.Resources {
					for _, v := range p.Verbs {
						if v == "create" {
							continue // server-side apply: checked by the API server, not recorded by the fake
						}
						if r == "pods" && slices.Contains([]string{"list", "delete"}, v) {
							continue // cleanup's pods: none labelled in the fake, and the typed list covers list
						}
						if !called[[3]string{p.Group, r, v}] {
							t.Errorf("row %q grants %s %s (group %q), which the run did not call", p.Why, v, r, p.Group)
						}
					}
				}
			}
		})
	}
	_ = runtime.Object(nil)
}
