package k8s

import (
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func fromU[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	v := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v); err != nil {
		t.Fatalf("%s: %v", ObjectRef(u), err)
	}
	return v
}

// TestGatewayRoutesPerKind checks that a gRPC or TCP step through a gateway
// reaches the target's gRPC or TCP server, each by a route of its kind on a
// listener of its own, not the HTTP route (where httpbin answers).
//
// Gateway API v1 (sigs.k8s.io/gateway-api apis/v1): "TCPRoute provides a
// way to route TCP requests. When combined with a Gateway listener, it
// can be used to forward connections on the port specified by the
// listener to a set of backends specified by the TCPRoute" (GA in v1.6:
// "We recommend using the "v1" API version with this API now"); a
// ParentReference's SectionName is "the name of a section within the
// target resource", for a Gateway a listener's name.
func TestGatewayRoutesPerKind(t *testing.T) {
	o, err := Options{Mesh: MeshGateway, Class: "eg", Namespace: "b", Routes: []string{RouteHTTP, RouteGRPC, RouteTCP}}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var gw *gatewayv1.Gateway
	type route struct {
		kind    string
		section string
		port    int32
	}
	var routes []route
	for _, u := range r.Objects {
		switch u.GetKind() {
		case "Gateway":
			gw = fromU[gatewayv1.Gateway](t, u)
		case "HTTPRoute":
			h := fromU[gatewayv1.HTTPRoute](t, u)
			routes = append(routes, route{"HTTPRoute", string(*h.Spec.ParentRefs[0].SectionName), int32(*h.Spec.Rules[0].BackendRefs[0].Port)})
		case "GRPCRoute":
			g := fromU[gatewayv1.GRPCRoute](t, u)
			routes = append(routes, route{"GRPCRoute", string(*g.Spec.ParentRefs[0].SectionName), int32(*g.Spec.Rules[0].BackendRefs[0].Port)})
		case "TCPRoute":
			c := fromU[gatewayv1.TCPRoute](t, u)
			routes = append(routes, route{"TCPRoute", string(*c.Spec.ParentRefs[0].SectionName), int32(*c.Spec.Rules[0].BackendRefs[0].Port)})
		}
	}
	if gw == nil {
		t.Fatal("no Gateway")
	}
	for _, tc := range []struct {
		url      string
		kind     string
		proto    gatewayv1.ProtocolType
		backend  int32
		protocol string
	}{
		{"http://target:8080", "HTTPRoute", gatewayv1.HTTPProtocolType, PortHTTP, "http1"},
		{"http://target:9090", "GRPCRoute", gatewayv1.HTTPProtocolType, PortGRPC, "grpc"},
		{"tcp://target:9000", "TCPRoute", gatewayv1.TCPProtocolType, PortTCP, "tcp-rr"},
	} {
		resolved, err := o.resolve(tc.url, both("198.18.0.9"))
		if err != nil {
			t.Fatal(err)
		}
		port := int32(urlPort(resolved))
		i := slices.IndexFunc(gw.Spec.Listeners, func(l gatewayv1.Listener) bool { return int32(l.Port) == port })
		if i < 0 {
			t.Errorf("%s goes to the Gateway's port %d, where no listener is", tc.url, port)
			continue
		}
		l := gw.Spec.Listeners[i]
		if l.Protocol != tc.proto || len(l.AllowedRoutes.Kinds) != 1 || string(l.AllowedRoutes.Kinds[0].Kind) != tc.kind {
			t.Errorf("%s lands on listener %s (%s, routes %v), want a %s listener of %ss", tc.url, l.Name, l.Protocol, l.AllowedRoutes.Kinds, tc.proto, tc.kind)
		}
		j := slices.IndexFunc(routes, func(r route) bool { return r.section == string(l.Name) })
		if j < 0 || routes[j].kind != tc.kind || routes[j].port != tc.backend {
			t.Errorf("%s: listener %s's route is %+v, want a %s to the target's port %d", tc.url, l.Name, routes, tc.kind, tc.backend)
		}
	}
}

// TestRoutesRefused checks that a kind of step the class cannot carry is
// refused, in one line, before anything is applied.
func TestRoutesRefused(t *testing.T) {
	step := func(path, url string) Step { return Step{Path: path, URL: url} }
	for _, tc := range []struct {
		o     Options
		steps []Step
		want  string // "" passes
		got   []string
	}{
		// aws-application-networking-k8s, docs/api-types/grpc-route.md,
		// Limitations: "Listener Protocol: The GRPCRoute sectionName must
		// refer to an HTTPS listener in the parent Gateway."
		{Options{Mesh: MeshGateway, Class: ClassLattice}, []Step{step("g", "http://target:9090")}, "The GRPCRoute sectionName must refer to an HTTPS listener", nil},
		// Its docs/api-types/gateway.md: "Terminate is used with
		// HTTPRoute/GRPCRoute, Passthrough is used with TLSRoute": no
		// TCPRoute.
		{Options{Mesh: MeshGateway, Class: ClassLattice}, []Step{step("t", "tcp://target:9000")}, "not TCPRoute", nil},
		{Options{Mesh: MeshIngress, Class: "traefik"}, []Step{step("g", "https://target:9090")}, "gRPC through --mesh ingress", nil},
		{Options{Mesh: MeshIngress, Class: "traefik"}, []Step{step("t", "tcp://target:9000")}, "TCP through --mesh ingress", nil},
		{Options{Mesh: MeshIngressNginx}, []Step{step("t", "tcp://target:9000")}, "TCP through --mesh ingress-nginx", nil},
		// ingress-nginx, docs/examples/grpc: "The ingress matches traffic
		// arriving as https://grpctest.dev.mydomain.com:443".
		{Options{Mesh: MeshIngressNginx}, []Step{step("g", "http://target:9090")}, "path g (http://target:9090): gRPC through ingress-nginx needs TLS", nil},
		{Options{Mesh: MeshIngressNginx}, []Step{step("g", "https://target:9090"), step("d", "http://target:8081")}, "", []string{RouteGRPC}},
		{Options{Mesh: MeshGateway, Class: "eg"}, []Step{step("t", "tcp://target:9000"), step("h", "http://target:8080"), step("g", "http://target:9090")},
			"", []string{RouteHTTP, RouteGRPC, RouteTCP}},
		{Options{Mesh: MeshGateway, Class: ClassLattice}, []Step{step("h", "http://target:8080"), step("x", "http://10.0.0.1:9090")}, "", []string{RouteHTTP}},
	} {
		o, err := tc.o.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.RoutesOf(tc.steps)
		switch {
		case tc.want == "" && (err != nil || !slices.Equal(got, tc.got)):
			t.Errorf("%s %s %v: %v %v, want %v", o.Mesh, o.Class, tc.steps, got, err, tc.got)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %s %v: %v, want a one-line refusal saying %q", o.Mesh, o.Class, tc.steps, err, tc.want)
		}
		if tc.want != "" {
			// Asked as routes to render, the same refusal.
			o.Routes = []string{tc.steps[0].Route()}
			if _, err := Render(o, nil); err == nil && !strings.Contains(tc.want, "needs TLS") {
				t.Errorf("%s %s: rendering routes %v accepted", o.Mesh, o.Class, o.Routes)
			}
		}
	}
}

// TestIngressNginxGRPC checks that gRPC through ingress-nginx is an Ingress
// of its own, annotated for a gRPC backend, on a host of its own that the
// workers send (:authority and SNI), over TLS on the controller's 443.
//
// ingress-nginx, docs/examples/grpc: "We've tagged the ingress with the
// annotation nginx.ingress.kubernetes.io/backend-protocol: "GRPC". This
// is the magic ingredient that sets up the appropriate nginx
// configuration to route http/2 traffic to our service."
func TestIngressNginxGRPC(t *testing.T) {
	o := Options{Mesh: MeshIngressNginx, Namespace: "b", Routes: []string{RouteHTTP, RouteGRPC}}
	ings := renderedIngresses(t, o)
	grpc, ok := ings[TargetName+"-grpc"]
	if !ok {
		t.Fatalf("no gRPC Ingress among %v", ings)
	}
	if got := grpc.Annotations["nginx.ingress.kubernetes.io/backend-protocol"]; got != "GRPC" {
		t.Errorf("backend-protocol %q, want GRPC", got)
	}
	rule := grpc.Spec.Rules[0]
	if rule.Host != IngressGRPCHost || rule.HTTP.Paths[0].Backend.Service.Port != (networkingv1.ServiceBackendPort{Number: PortGRPC}) {
		t.Errorf("gRPC rule %+v, want host %s to port %d", rule, IngressGRPCHost, PortGRPC)
	}
	if len(grpc.Spec.TLS) != 1 || !slices.Contains(grpc.Spec.TLS[0].Hosts, IngressGRPCHost) {
		t.Errorf("gRPC Ingress TLS %+v, want its host", grpc.Spec.TLS)
	}
	if http := ings[TargetName]; http.Annotations["nginx.ingress.kubernetes.io/backend-protocol"] != "" {
		t.Errorf("the HTTP Ingress speaks %s to httpbin", http.Annotations["nginx.ingress.kubernetes.io/backend-protocol"])
	}
	d, err := o.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.RunArgs(Load{Protocol: "grpc", Duration: time.Second}, Step{URL: "https://target:9090", Insecure: true}, both("198.18.0.7"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(a, " ")
	for _, want := range []string{"-H Host: " + IngressGRPCHost, "--sni " + IngressGRPCHost, "https://198.18.0.7:443"} {
		if !strings.Contains(got, want) {
			t.Errorf("run args %q lack %q", got, want)
		}
	}
}

// TestGatewayName checks that --gateway-name names the Gateway and what
// refers to it. aws-application-networking-k8s, docs/api-types/gateway.md:
// "Service networks are identified by Gateway name (without namespace) - for
// example, a Gateway named my-gateway will point to a VPC Lattice service
// network my-gateway."
func TestGatewayName(t *testing.T) {
	r, err := Render(Options{Mesh: MeshGateway, Class: ClassLattice, Gateway: "my-network"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range r.Objects {
		switch u.GetKind() {
		case "Gateway":
			if u.GetName() != "my-network" {
				t.Errorf("Gateway %s, want my-network", u.GetName())
			}
			n++
		case "HTTPRoute", "GRPCRoute", "TCPRoute":
			refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
			for _, p := range refs {
				if p.(map[string]any)["name"] != "my-network" {
					t.Errorf("%s refers to %v, want my-network", ObjectRef(u), p)
				}
			}
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d gateway objects", n)
	}
	for _, o := range []Options{{Mesh: MeshIstio, Gateway: "x"}, {Mesh: MeshGateway, Class: "eg", Gateway: "Bad_Name"}} {
		if _, err := Render(o, nil); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
