package k8s

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayName is the default Gateway of --mesh gateway (--gateway-name).
const GatewayName = "loadgen-gateway"

// Gateway listener ports: a listener per route kind, so that no
// implementation has to arbitrate between two kinds on one port.
const (
	GatewayPortHTTP = 80
	GatewayPortGRPC = 9090
	GatewayPortTCP  = 9000
)

// gatewayObjects are a Gateway of the user's class and, for each route
// kind the run takes (Routes), its listener and a route to the target's
// port: an HTTPRoute to httpbin, a GRPCRoute to the gRPC echo, a
// TCPRoute (Gateway API v1 since v1.6) to the TCP echo. The same objects
// on any implementation (NGINX Gateway Fabric, Envoy Gateway, Istio,
// Cilium, Amazon VPC Lattice).
func (o Options) gatewayObjects() []runtime.Object {
	same := gatewayv1.NamespacesFromSame
	listener := func(name string, port gatewayv1.PortNumber, proto gatewayv1.ProtocolType, kind gatewayv1.Kind) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: proto,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &same},
				Kinds: []gatewayv1.RouteGroupKind{{Kind: kind}}}}
	}
	gw := &gatewayv1.Gateway{
		ObjectMeta: o.Meta(o.GatewayObject(), o.Namespace, nil),
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(o.Class)},
	}
	parent := func(section string) []gatewayv1.ParentReference {
		return []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(o.GatewayObject()), SectionName: ptr.To(gatewayv1.SectionName(section))}}
	}
	backend := func(port gatewayv1.PortNumber) gatewayv1.BackendRef {
		return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: TargetName, Port: ptr.To(port)}}
	}
	out := []runtime.Object{gw}
	if o.routes(RouteHTTP) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, listener(RouteHTTP, GatewayPortHTTP, gatewayv1.HTTPProtocolType, "HTTPRoute"))
		out = append(out, &gatewayv1.HTTPRoute{
			ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent(RouteHTTP)},
				Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backend(PortHTTP)}}}},
			},
		})
	}
	if o.routes(RouteGRPC) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, listener(RouteGRPC, GatewayPortGRPC, gatewayv1.HTTPProtocolType, "GRPCRoute"))
		out = append(out, &gatewayv1.GRPCRoute{
			ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
			Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent(RouteGRPC)},
				Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backend(PortGRPC)}}}},
			},
		})
	}
	if o.routes(RouteTCP) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, listener(RouteTCP, GatewayPortTCP, gatewayv1.TCPProtocolType, "TCPRoute"))
		out = append(out, &gatewayv1.TCPRoute{
			ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
			Spec: gatewayv1.TCPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent(RouteTCP)},
				Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{backend(PortTCP)}}},
			},
		})
	}
	return out
}

// GatewayObject is the Gateway's name: --gateway-name, or GatewayName.
func (o Options) GatewayObject() string {
	if o.Gateway != "" {
		return o.Gateway
	}
	return GatewayName
}

// RouteKind is the Gateway API kind of a route kind's route.
func RouteKind(route string) string {
	switch route {
	case RouteGRPC:
		return "GRPCRoute"
	case RouteTCP:
		return "TCPRoute"
	}
	return "HTTPRoute"
}
