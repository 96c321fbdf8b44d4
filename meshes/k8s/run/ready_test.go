package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"loadgen/meshes/k8s"
)

// appMeshObjects are the rendering's App Mesh objects as the controller
// leaves them: each active, every route with its ARN, less what broken
// says is not so.
func appMeshObjects(t *testing.T, o k8s.Options, broken func(u *unstructured.Unstructured) *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	r, err := k8s.Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, u := range r.WithoutClient() {
		if u.GroupVersionKind().Group != "appmesh.k8s.aws" {
			continue
		}
		u = withConditions(u, map[string]string{u.GetKind() + "Active": "True"}, "")
		if u.GetKind() == "VirtualRouter" {
			arns := map[string]string{}
			routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "routes")
			for _, rt := range routes {
				n := rt.(map[string]any)["name"].(string)
				arns[n] = "arn:aws:appmesh:eu-west-1:000000000000:mesh/loadgen/virtualRouter/loadgen-target_bench/route/" + n
			}
			_ = unstructured.SetNestedStringMap(u.Object, arns, "status", "routeARNs")
		}
		if broken != nil {
			u = broken(u)
		}
		out = append(out, u)
	}
	return out
}

// TestCheckAppMesh checks that before the first step, every App Mesh object
// of the rendering has its controller's condition True
// (aws-app-mesh-controller-for-k8s apis/appmesh/v1beta2: "VirtualRouterActive
// is True when the AppMesh VirtualRouter has been created or found via the
// API", likewise MeshActive, VirtualNodeActive, VirtualServiceActive) and
// every route of the router has an ARN (status.routeARNs, "a map of
// AppMesh Route objects' Amazon Resource Names, indexed by route name"):
// issue #715's router was VirtualRouterActive while App Mesh refused its
// gRPC route. A refusal names the condition and its message.
func TestCheckAppMesh(t *testing.T) {
	o, err := k8s.Options{Mesh: k8s.MeshAppMesh, Namespace: "bench"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		broken func(u *unstructured.Unstructured) *unstructured.Unstructured
		want   string // "" passes
	}{
		{"every object active, every route accepted", nil, ""},
		{"a route App Mesh refused", func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "VirtualRouter" {
				unstructured.RemoveNestedField(u.Object, "status", "routeARNs", "grpc-9090")
			}
			return u
		}, "VirtualRouter bench/loadgen-target: route grpc-9090 has no ARN in status.routeARNs"},
		{"a service not active, with the controller's message", func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "VirtualService" {
				return withConditions(u, map[string]string{"VirtualServiceActive": "False"}, "BadRequestException: VirtualRouter not found")
			}
			return u
		}, "VirtualService bench/loadgen-target: VirtualServiceActive is False (Failed): BadRequestException: VirtualRouter not found"},
		{"a node the controller has not seen", func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "VirtualNode" && u.GetName() == k8s.ClientName {
				unstructured.RemoveNestedField(u.Object, "status")
			}
			return u
		}, "VirtualNode bench/loadgen-client: no VirtualNodeActive condition yet"},
		{"the cluster-scoped mesh", func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "Mesh" {
				return withConditions(u, map[string]string{"MeshActive": "False"}, "AccessDeniedException")
			}
			return u
		}, "Mesh loadgen: MeshActive is False (Failed): AccessDeniedException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var said []string
			k := &Coordinator{Cluster: fakeCluster(t, nil, appMeshObjects(t, o, tc.broken)...), Options: o,
				TargetWait: time.Millisecond, Poll: time.Millisecond,
				Events: func(f string, a ...any) { said = append(said, f) }}
			err := k.checkAppMesh(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && len(said) == 0:
				t.Error("nothing reported of the objects' status")
			case tc.want != "" && (!errors.Is(err, ErrMeshMissing) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%v, want ErrMeshMissing saying %q", err, tc.want)
			}
		})
	}
}

// gatewayObjects are the rendering's Gateway and routes as an
// implementation leaves them: the Gateway Accepted and Programmed, each
// route Accepted by it with its references resolved, less what broken
// changes.
func gatewayObjects(t *testing.T, o k8s.Options, broken func(u *unstructured.Unstructured) *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	r, err := k8s.Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, u := range r.WithoutClient() {
		switch u.GetKind() {
		case "Gateway":
			u = withConditions(u, map[string]string{"Accepted": "True", "Programmed": "True"}, "")
		case "HTTPRoute", "GRPCRoute", "TCPRoute":
			u = u.DeepCopy()
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
				"parentRef":      map[string]any{"name": o.GatewayObject()},
				"controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
				"conditions": []any{map[string]any{"type": "Accepted", "status": "True"},
					map[string]any{"type": "ResolvedRefs", "status": "True"}},
			}}, "status", "parents")
		default:
			continue
		}
		if broken != nil {
			u = broken(u)
		}
		out = append(out, u)
	}
	return out
}

// TestCheckGateway checks that before the first step, the Gateway is Accepted
// and Programmed and each route Accepted by it, as Gateway API's status
// conditions say (apis/v1: GatewayConditionProgrammed "indicates whether
// a Gateway has generated some configuration that is assumed to be ready
// soon in the underlying data plane"; RouteConditionAccepted "indicates
// whether the route has been accepted or rejected by a Gateway"); a
// refusal names the condition and its message. VPC Lattice's controller
// writes Programmed False "VPC Lattice Service Network not found" when no
// service network has the Gateway's name (pkg/controllers/gateway_controller.go).
func TestCheckGateway(t *testing.T) {
	o, err := k8s.Options{Mesh: k8s.MeshGateway, Class: "eg", Namespace: "bench", Routes: []string{k8s.RouteHTTP, k8s.RouteGRPC, k8s.RouteTCP}}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	lattice, err := k8s.Options{Mesh: k8s.MeshGateway, Class: k8s.ClassLattice, Namespace: "bench", Gateway: "my-network"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		o      k8s.Options
		broken func(u *unstructured.Unstructured) *unstructured.Unstructured
		want   string // "" passes
	}{
		{"accepted and programmed", o, nil, ""},
		{"lattice, no service network of the Gateway's name", lattice, func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "Gateway" {
				return withConditions(u, map[string]string{"Accepted": "True", "Programmed": "False"}, "VPC Lattice Service Network not found")
			}
			return u
		}, "Gateway bench/my-network: Programmed is False (Failed): VPC Lattice Service Network not found"},
		{"a route its Gateway refused", o, func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "TCPRoute" {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"parentRef": map[string]any{"name": k8s.GatewayName},
					"conditions": []any{map[string]any{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners",
						"message": "no listener allows TCPRoute"}}}}, "status", "parents")
			}
			return u
		}, "TCPRoute bench/loadgen-target: Accepted is False (NotAllowedByListeners): no listener allows TCPRoute"},
		{"a route whose backend is not resolved", o, func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "GRPCRoute" {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"parentRef": map[string]any{"name": k8s.GatewayName},
					"conditions": []any{map[string]any{"type": "Accepted", "status": "True"},
						map[string]any{"type": "ResolvedRefs", "status": "False", "reason": "BackendNotFound", "message": "Service bench/loadgen-target not found"}}}},
					"status", "parents")
			}
			return u
		}, "GRPCRoute bench/loadgen-target: ResolvedRefs is False (BackendNotFound)"},
		{"a route no controller has seen", o, func(u *unstructured.Unstructured) *unstructured.Unstructured {
			if u.GetKind() == "HTTPRoute" {
				unstructured.RemoveNestedField(u.Object, "status")
			}
			return u
		}, "HTTPRoute bench/loadgen-target: no status from Gateway loadgen-gateway's controller yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var said []string
			k := &Coordinator{Cluster: fakeCluster(t, nil, gatewayObjects(t, tc.o, tc.broken)...), Options: tc.o,
				TargetWait: time.Millisecond, Poll: time.Millisecond,
				Events: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
			err := k.checkGateway(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && len(said) != 1+len(tc.o.Routes):
				t.Errorf("said %q, want the Gateway's and each route's status", said)
			case tc.want != "" && (!errors.Is(err, ErrMeshMissing) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%v, want ErrMeshMissing saying %q", err, tc.want)
			}
		})
	}
}
