package k8s

import (
	"fmt"
	"slices"
)

// The kinds of traffic an ingress or a gateway carries to the target, each
// its own route (and, on a gateway, its own listener).
const (
	RouteHTTP = "http" // to httpbin, 8080
	RouteGRPC = "grpc" // to the gRPC echo, 9090
	RouteTCP  = "tcp"  // to the TCP echo, 9000
)

// RouteKinds lists the route kinds in the order they are rendered.
var RouteKinds = []string{RouteHTTP, RouteGRPC, RouteTCP}

// carries refuses a route kind the mesh's class cannot carry: a step of
// that kind would land on the HTTP route (httpbin answers) or nowhere.
func (o Options) carries(route string) error {
	switch {
	case !slices.Contains(RouteKinds, route):
		return fmt.Errorf("route %q: want some of %v", route, RouteKinds)
	case route == RouteHTTP:
		return nil
	case o.Mesh == MeshGateway && o.Class == ClassLattice && route == RouteGRPC:
		// aws-application-networking-k8s, docs/api-types/grpc-route.md.
		return fmt.Errorf("gRPC through --class %s: \"The GRPCRoute sectionName must refer to an HTTPS listener\" (the AWS Gateway API "+
			"Controller's GRPCRoute limitations), and loadgen's gRPC listener is plain HTTP; measure gRPC through another class", o.Class)
	case o.Mesh == MeshGateway && o.Class == ClassLattice:
		return fmt.Errorf("TCP through --class %s: the AWS Gateway API Controller routes HTTPRoute, GRPCRoute and TLSRoute, not TCPRoute; "+
			"measure TCP through another class", o.Class)
	case o.Mesh == MeshGateway:
		return nil
	case o.Mesh == MeshIngress && route == RouteGRPC:
		return fmt.Errorf("gRPC through --mesh ingress: an Ingress has no portable way to say a backend speaks gRPC; " +
			"use --mesh gateway (a GRPCRoute) or, for ingress-nginx, --mesh ingress-nginx (its backend-protocol annotation)")
	case o.UsesIngress() && route == RouteTCP:
		return fmt.Errorf("TCP through --mesh %s: an Ingress carries HTTP only (ingress-nginx's TCP services are its controller's "+
			"tcp-services ConfigMap, shared by the cluster); use --mesh gateway, whose TCPRoute carries it", o.Mesh)
	case o.Mesh == MeshIngressNginx && route == RouteGRPC:
		return nil
	}
	return fmt.Errorf("route %s: --mesh %s has no routes", route, o.Mesh)
}

// routes tells whether the rendering carries a route kind.
func (o Options) routes(route string) bool { return slices.Contains(o.Routes, route) }

// Route is the route kind a step's load takes through an ingress or a
// gateway: "" for a step that does not load the target through it (the
// direct path, another host).
func (st Step) Route() string {
	if !st.UsesTarget() || DirectURL(st.URL) {
		return ""
	}
	switch urlPort(st.URL) {
	case PortGRPC:
		return RouteGRPC
	case PortTCP:
		return RouteTCP
	}
	return RouteHTTP
}

// RoutesOf are the route kinds the steps take, in RouteKinds' order, and
// a refusal of a step the mesh cannot carry as it is asked (its path and
// URL named): gRPC through ingress-nginx, which serves HTTP/2 on its TLS
// port only, asked over plain HTTP.
func (o Options) RoutesOf(steps []Step) ([]string, error) {
	used := map[string]bool{}
	for _, st := range steps {
		r := st.Route()
		if r == "" {
			continue
		}
		used[r] = true
		if !o.Published() {
			continue
		}
		if err := o.carries(r); err != nil {
			return nil, fmt.Errorf("path %s (%s): %w", st.Path, st.URL, err)
		}
		if o.Mesh == MeshIngressNginx && r == RouteGRPC && urlScheme(st.URL) != "https" {
			// ingress-nginx, docs/examples/grpc: "The ingress matches traffic
			// arriving as https://grpctest.dev.mydomain.com:443".
			return nil, fmt.Errorf("path %s (%s): gRPC through ingress-nginx needs TLS: the controller serves HTTP/2 on its HTTPS port only; "+
				"use https://%s:%d (insecure: true with loadgen's self-signed certificate)", st.Path, st.URL, TargetHost, PortGRPC)
		}
	}
	var out []string
	for _, r := range RouteKinds {
		if used[r] {
			out = append(out, r)
		}
	}
	return out, nil
}
