// Package appmesh mirrors the custom resources of the AWS App Mesh
// controller (appmesh.k8s.aws/v1beta2) as typed Go values: Mesh,
// VirtualNode, VirtualRouter and VirtualService, with the fields loadgen
// renders. No maintained Go module publishes them, so these follow the
// controller's CRDs field for field (names, JSON tags, optionality).
//
// AWS discontinued App Mesh on 2026-09-30; these exist for users still
// measuring a migration away from it.
package appmesh

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mesh is a service mesh: the namespaces whose pods join it.
type Mesh struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MeshSpec   `json:"spec,omitempty"`
	Status            MeshStatus `json:"status,omitempty"`
}

// MeshSpec is appmesh.k8s.aws/v1beta2 MeshSpec.
type MeshSpec struct {
	AWSName *string `json:"awsName,omitempty"`
	// NamespaceSelector selects the namespaces of the mesh; nil selects none.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	EgressFilter      *EgressFilter         `json:"egressFilter,omitempty"`
	MeshOwner         *string               `json:"meshOwner,omitempty"`
}

// EgressFilter is ALLOW_ALL or DROP_ALL.
type EgressFilter struct {
	Type string `json:"type"`
}

// MeshStatus is what the controller reports.
type MeshStatus struct {
	MeshARN            *string     `json:"meshARN,omitempty"`
	Conditions         []Condition `json:"conditions,omitempty"`
	ObservedGeneration *int64      `json:"observedGeneration,omitempty"`
}

// The conditions the controller sets True once it has created (or
// found) a resource in App Mesh.
const (
	MeshActive           = "MeshActive"
	VirtualNodeActive    = "VirtualNodeActive"
	VirtualRouterActive  = "VirtualRouterActive"
	VirtualServiceActive = "VirtualServiceActive"
)

// Condition is a status condition of any App Mesh resource.
type Condition struct {
	Type               string       `json:"type"`
	Status             string       `json:"status"`
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             *string      `json:"reason,omitempty"`
	Message            *string      `json:"message,omitempty"`
}

// MeshList is a list of Mesh.
type MeshList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Mesh `json:"items"`
}

// MeshReference names the mesh a resource belongs to; the controller's
// webhook fills it from the namespace.
type MeshReference struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// VirtualNode is a logical pointer to a workload: the pods of PodSelector.
type VirtualNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VirtualNodeSpec `json:"spec,omitempty"`
	Status            StatusCommon    `json:"status,omitempty"`
}

// VirtualNodeSpec is appmesh.k8s.aws/v1beta2 VirtualNodeSpec.
type VirtualNodeSpec struct {
	AWSName          *string               `json:"awsName,omitempty"`
	PodSelector      *metav1.LabelSelector `json:"podSelector,omitempty"`
	Listeners        []Listener            `json:"listeners,omitempty"`
	ServiceDiscovery *ServiceDiscovery     `json:"serviceDiscovery,omitempty"`
	Backends         []Backend             `json:"backends,omitempty"`
	MeshRef          *MeshReference        `json:"meshRef,omitempty"`
}

// Listener is where a virtual node accepts traffic.
type Listener struct {
	PortMapping PortMapping `json:"portMapping"`
}

// PortMapping is a port and its protocol: http, http2, grpc or tcp.
type PortMapping struct {
	Port     int64  `json:"port"`
	Protocol string `json:"protocol"`
}

// ServiceDiscovery tells how the mesh finds the node's endpoints.
type ServiceDiscovery struct {
	DNS *DNSServiceDiscovery `json:"dns,omitempty"`
}

// DNSServiceDiscovery resolves a hostname (a Kubernetes Service).
type DNSServiceDiscovery struct {
	Hostname     string  `json:"hostname"`
	ResponseType *string `json:"responseType,omitempty"` // LOADBALANCER or ENDPOINTS
}

// Backend is a virtual service the node may call.
type Backend struct {
	VirtualService VirtualServiceBackend `json:"virtualService"`
}

// VirtualServiceBackend refers to a VirtualService.
type VirtualServiceBackend struct {
	VirtualServiceRef *VirtualServiceReference `json:"virtualServiceRef,omitempty"`
	VirtualServiceARN *string                  `json:"virtualServiceARN,omitempty"`
}

// VirtualServiceReference names a VirtualService.
type VirtualServiceReference struct {
	Namespace *string `json:"namespace,omitempty"`
	Name      string  `json:"name"`
}

// StatusCommon is the status of virtual nodes, routers and services.
type StatusCommon struct {
	Conditions         []Condition `json:"conditions,omitempty"`
	ObservedGeneration *int64      `json:"observedGeneration,omitempty"`
}

// VirtualNodeList is a list of VirtualNode.
type VirtualNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualNode `json:"items"`
}

// VirtualRouter routes a virtual service's traffic to virtual nodes.
type VirtualRouter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VirtualRouterSpec   `json:"spec,omitempty"`
	Status            VirtualRouterStatus `json:"status,omitempty"`
}

// VirtualRouterStatus is the router's status: its conditions and the
// App Mesh routes the controller created, by route name.
type VirtualRouterStatus struct {
	VirtualRouterARN   *string           `json:"virtualRouterARN,omitempty"`
	RouteARNs          map[string]string `json:"routeARNs,omitempty"`
	Conditions         []Condition       `json:"conditions,omitempty"`
	ObservedGeneration *int64            `json:"observedGeneration,omitempty"`
}

// VirtualRouterSpec is appmesh.k8s.aws/v1beta2 VirtualRouterSpec.
type VirtualRouterSpec struct {
	AWSName   *string                 `json:"awsName,omitempty"`
	Listeners []VirtualRouterListener `json:"listeners,omitempty"`
	Routes    []Route                 `json:"routes,omitempty"`
	MeshRef   *MeshReference          `json:"meshRef,omitempty"`
}

// VirtualRouterListener is a port the router accepts.
type VirtualRouterListener struct {
	PortMapping PortMapping `json:"portMapping"`
}

// Route is one route of a router; exactly one of its kinds is set.
type Route struct {
	Name      string     `json:"name"`
	HTTPRoute *HTTPRoute `json:"httpRoute,omitempty"`
	GRPCRoute *GRPCRoute `json:"grpcRoute,omitempty"`
	TCPRoute  *TCPRoute  `json:"tcpRoute,omitempty"`
	Priority  *int64     `json:"priority,omitempty"`
}

// HTTPRoute matches requests by path prefix.
type HTTPRoute struct {
	Match  HTTPRouteMatch `json:"match"`
	Action RouteAction    `json:"action"`
}

// HTTPRouteMatch is appmesh.k8s.aws/v1beta2 HTTPRouteMatch (prefix and
// port only).
type HTTPRouteMatch struct {
	Prefix *string `json:"prefix,omitempty"`
	// Port is the router listener the route takes traffic from: App Mesh
	// refuses a route without it on a router of several listeners.
	Port *int64 `json:"port,omitempty"`
}

// GRPCRoute matches calls by service name.
type GRPCRoute struct {
	Match  GRPCRouteMatch `json:"match"`
	Action RouteAction    `json:"action"`
}

// GRPCRouteMatch is appmesh.k8s.aws/v1beta2 GRPCRouteMatch (service name
// and port only; the controller carries the port to App Mesh since
// v1.12.2, aws-app-mesh-controller-for-k8s#710).
type GRPCRouteMatch struct {
	ServiceName *string `json:"serviceName,omitempty"`
	Port        *int64  `json:"port,omitempty"`
}

// TCPRoute sends every connection on its match's port to its targets.
type TCPRoute struct {
	Match  TCPRouteMatch `json:"match"`
	Action RouteAction   `json:"action"`
}

// TCPRouteMatch is appmesh.k8s.aws/v1beta2 TCPRouteMatch.
type TCPRouteMatch struct {
	Port *int64 `json:"port,omitempty"`
}

// RouteAction spreads traffic over weighted targets.
type RouteAction struct {
	WeightedTargets []WeightedTarget `json:"weightedTargets"`
}

// WeightedTarget is a virtual node and its share.
type WeightedTarget struct {
	VirtualNodeRef *VirtualNodeReference `json:"virtualNodeRef,omitempty"`
	Weight         int64                 `json:"weight"`
	Port           *int64                `json:"port,omitempty"`
}

// VirtualNodeReference names a VirtualNode.
type VirtualNodeReference struct {
	Namespace *string `json:"namespace,omitempty"`
	Name      string  `json:"name"`
}

// VirtualRouterList is a list of VirtualRouter.
type VirtualRouterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualRouter `json:"items"`
}

// VirtualService is the name clients call, provided by a router or a node.
type VirtualService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VirtualServiceSpec `json:"spec,omitempty"`
	Status            StatusCommon       `json:"status,omitempty"`
}

// VirtualServiceSpec is appmesh.k8s.aws/v1beta2 VirtualServiceSpec.
type VirtualServiceSpec struct {
	AWSName  *string                 `json:"awsName,omitempty"`
	Provider *VirtualServiceProvider `json:"provider,omitempty"`
	MeshRef  *MeshReference          `json:"meshRef,omitempty"`
}

// VirtualServiceProvider is exactly one of a router or a node.
type VirtualServiceProvider struct {
	VirtualRouter *VirtualRouterServiceProvider `json:"virtualRouter,omitempty"`
	VirtualNode   *VirtualNodeServiceProvider   `json:"virtualNode,omitempty"`
}

// VirtualRouterServiceProvider refers to a VirtualRouter.
type VirtualRouterServiceProvider struct {
	VirtualRouterRef *VirtualRouterReference `json:"virtualRouterRef,omitempty"`
}

// VirtualRouterReference names a VirtualRouter.
type VirtualRouterReference struct {
	Namespace *string `json:"namespace,omitempty"`
	Name      string  `json:"name"`
}

// VirtualNodeServiceProvider refers to a VirtualNode.
type VirtualNodeServiceProvider struct {
	VirtualNodeRef *VirtualNodeReference `json:"virtualNodeRef,omitempty"`
}

// VirtualServiceList is a list of VirtualService.
type VirtualServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualService `json:"items"`
}
