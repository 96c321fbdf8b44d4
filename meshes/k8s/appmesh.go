package k8s

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"loadgen/meshes/k8s/appmesh"
)

// AppMeshName is the Mesh of --mesh appmesh.
const AppMeshName = "loadgen"

// AppMeshNotice is said once whenever App Mesh is rendered.
const AppMeshNotice = "note: AWS discontinued App Mesh on 2026-09-30; these objects are for measuring a migration. " +
	"AWS points App Mesh users to Amazon VPC Lattice, which loadgen reaches through Gateway API: " +
	"--mesh gateway --class amazon-vpc-lattice. " +
	"The injected Envoy needs the IAM action appmesh:StreamAggregatedResources (the AWSAppMeshEnvoyAccess policy) " +
	"on the workers' and the target's pods, and gRPC routes need the App Mesh controller v1.12.2 or later"

// appMeshObjects are the Mesh, the target's and the client's VirtualNodes,
// a VirtualRouter with an HTTP, a gRPC and a TCP route, and the
// VirtualService that clients call.
func (o Options) appMeshObjects() []runtime.Object {
	host := fmt.Sprintf("%s.%s.svc.cluster.local", TargetName, o.Namespace)
	ns := ptr.To(o.Namespace)
	mesh := &appmesh.Mesh{
		// Cluster-scoped: the namespace label lets cleanup -n find it.
		ObjectMeta: o.Meta(AppMeshName, "", map[string]string{LabelNamespace: o.Namespace}),
		Spec: appmesh.MeshSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelAppMeshMesh: AppMeshName}},
			EgressFilter:      &appmesh.EgressFilter{Type: "ALLOW_ALL"},
		},
	}
	listeners := []appmesh.Listener{
		{PortMapping: appmesh.PortMapping{Port: PortHTTP, Protocol: "http"}},
		{PortMapping: appmesh.PortMapping{Port: PortGRPC, Protocol: "grpc"}},
		{PortMapping: appmesh.PortMapping{Port: PortTCP, Protocol: "tcp"}},
	}
	target := &appmesh.VirtualNode{
		ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
		Spec: appmesh.VirtualNodeSpec{
			PodSelector:      &metav1.LabelSelector{MatchLabels: targetLabels()},
			Listeners:        listeners,
			ServiceDiscovery: &appmesh.ServiceDiscovery{DNS: &appmesh.DNSServiceDiscovery{Hostname: host}},
		},
	}
	client := &appmesh.VirtualNode{
		ObjectMeta: o.Meta(ClientName, o.Namespace, nil),
		Spec: appmesh.VirtualNodeSpec{
			PodSelector: &metav1.LabelSelector{MatchLabels: clientLabels()},
			Backends: []appmesh.Backend{{VirtualService: appmesh.VirtualServiceBackend{
				VirtualServiceRef: &appmesh.VirtualServiceReference{Namespace: ns, Name: TargetName}}}},
		},
	}
	to := func(port int64) appmesh.RouteAction {
		return appmesh.RouteAction{WeightedTargets: []appmesh.WeightedTarget{{
			VirtualNodeRef: &appmesh.VirtualNodeReference{Namespace: ns, Name: TargetName}, Weight: 1, Port: ptr.To(port)}}}
	}
	// A router of several listeners: App Mesh refuses a route that does
	// not say, by match.port, which listener it takes traffic from
	// ("Route must define a port match criteria if the Virtual Router has
	// multiple listeners").
	router := &appmesh.VirtualRouter{
		ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
		Spec: appmesh.VirtualRouterSpec{
			Listeners: []appmesh.VirtualRouterListener{
				{PortMapping: listeners[0].PortMapping}, {PortMapping: listeners[1].PortMapping}, {PortMapping: listeners[2].PortMapping}},
			Routes: []appmesh.Route{
				{Name: "http-" + strconv.Itoa(PortHTTP), HTTPRoute: &appmesh.HTTPRoute{
					Match: appmesh.HTTPRouteMatch{Prefix: ptr.To("/"), Port: ptr.To[int64](PortHTTP)}, Action: to(PortHTTP)}},
				{Name: "grpc-" + strconv.Itoa(PortGRPC), GRPCRoute: &appmesh.GRPCRoute{
					Match: appmesh.GRPCRouteMatch{Port: ptr.To[int64](PortGRPC)}, Action: to(PortGRPC)}},
				{Name: "tcp-" + strconv.Itoa(PortTCP), TCPRoute: &appmesh.TCPRoute{
					Match: appmesh.TCPRouteMatch{Port: ptr.To[int64](PortTCP)}, Action: to(PortTCP)}},
			},
		},
	}
	service := &appmesh.VirtualService{
		ObjectMeta: o.Meta(TargetName, o.Namespace, nil),
		Spec: appmesh.VirtualServiceSpec{
			AWSName: ptr.To(host),
			Provider: &appmesh.VirtualServiceProvider{VirtualRouter: &appmesh.VirtualRouterServiceProvider{
				VirtualRouterRef: &appmesh.VirtualRouterReference{Namespace: ns, Name: TargetName}}},
		},
	}
	return []runtime.Object{mesh, target, client, router, service}
}
