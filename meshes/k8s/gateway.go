package k8s

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayName is the Gateway of --mesh gateway.
const GatewayName = "loadgen-gateway"

// Gateway listener ports: HTTP routes on one, gRPC routes on the other, so
// that no implementation has to arbitrate between the two kinds.
const (
	GatewayPortHTTP = 80
	GatewayPortGRPC = 9090
)

// gatewayObjects are a Gateway of the user's class, an HTTPRoute to the
// target's HTTP port and a GRPCRoute to its gRPC port: the same objects on
// any implementation (NGINX Gateway Fabric, Envoy Gateway, Istio, Cilium,
// Amazon VPC Lattice).
func (o Options) gatewayObjects() []runtime.Object {
	same := gatewayv1.NamespacesFromSame
	gw := &gatewayv1.Gateway{
		ObjectMeta: o.Meta(GatewayName, o.Namespace, nil),
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(o.Class),
			Listeners: []gatewayv1.Listener{
				{Name: "http", Port: GatewayPortHTTP, Protocol: gatewayv1.HTTPProtocolType,
					AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &same},
						Kinds: []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}}}},
				{Name: "grpc", Port: GatewayPortGRPC, Protocol: gatewayv1.HTTPProtocolType,
					AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &same},
						Kinds: []gatewayv1.RouteGroupKind{{Kind: "GRPCRoute"}}}},
			},
		},
	}
	parent := func(section string) []gatewayv1.ParentReference {
		return []gatewayv1.ParentReference{{Name: GatewayName, SectionName: ptr.To(gatewayv1.SectionName(section))}}
	}
	backend := func(port gatewayv1.PortNumber) gatewayv1.BackendObjectReference {
		return gatewayv1.BackendObjectReference{Name: TargetName, Port: ptr.To(port)}
	}
	http := &gatewayv1.HTTPRoute{
		ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("http")},
			Rules: []gatewayv1.HTTPRouteRule{{
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: backend(PortHTTP)}}},
			}},
		},
	}
	grpc := &gatewayv1.GRPCRoute{
		ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("grpc")},
			Rules: []gatewayv1.GRPCRouteRule{{
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: backend(PortGRPC)}}},
			}},
		},
	}
	return []runtime.Object{gw, http, grpc}
}
