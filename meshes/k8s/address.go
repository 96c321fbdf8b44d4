package k8s

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Addresses are where an ingress's or a gateway's mesh path is reached,
// as the cluster published them: the HTTP routes' and the gRPC route's
// (Amazon VPC Lattice gives each route a domain of its own).
type Addresses struct {
	HTTP, GRPC string
}

// both is one address for every route.
func both(a string) Addresses { return Addresses{HTTP: a, GRPC: a} }

// ClassLattice is Amazon VPC Lattice's GatewayClass, where AWS sends App
// Mesh users.
const ClassLattice = "amazon-vpc-lattice"

// AnnLatticeDomain is the annotation the AWS Gateway API controller sets
// on an HTTPRoute or GRPCRoute: the Lattice service's domain, the route's
// address (Lattice publishes no Gateway status.addresses).
const AnnLatticeDomain = "application-networking.k8s.aws/lattice-assigned-domain-name"

// gatewayService is the Service a Gateway of a class is reached by, where
// the implementation documents its name: Istio and NGINX Gateway Fabric
// name it <gateway>-<class>, Cilium cilium-gateway-<gateway>. Other
// implementations (Envoy Gateway, Traefik, Lattice) publish their address
// only in the cluster: k8s run reads it.
func (o Options) gatewayService() (string, bool) {
	switch o.Class {
	case "istio", "nginx":
		return fmt.Sprintf("%s-%s.%s.svc.cluster.local", GatewayName, o.Class, o.Namespace), true
	case "cilium":
		return fmt.Sprintf("cilium-gateway-%s.%s.svc.cluster.local", GatewayName, o.Namespace), true
	}
	return "", false
}

// errNoAddress is a gateway whose address only the cluster knows.
type errNoAddress struct{ o Options }

func (e errNoAddress) Error() string {
	if e.o.ingress() {
		return fmt.Sprintf("ingress class %s: the address is Ingress %s/%s's status.loadBalancer.ingress, which only the cluster knows (k8s run reads it)", e.o.Class, e.o.Namespace, TargetName)
	}
	if e.o.Class == ClassLattice {
		return fmt.Sprintf("class %s: the address is the routes' %s annotation, which only the cluster knows (k8s run reads it)", e.o.Class, AnnLatticeDomain)
	}
	return fmt.Sprintf("class %s: the address is Gateway %s/%s's status.addresses, which only the cluster knows (k8s run reads it)", e.o.Class, e.o.Namespace, GatewayName)
}

// URL is the address workers load for a target port through the mesh,
// without the cluster: the target's Service for sidecar and ambient
// meshes, the ingress controller's Service (as its chart names it), or
// the Gateway's Service where its implementation documents the name.
func (o Options) URL(port int) (string, error) {
	return o.resolve("http://"+TargetHost+":"+strconv.Itoa(port), Addresses{})
}

// waitAddresses waits for what the ingress or the gateway publishes as
// the mesh path's address, and says which object and field it waited on
// when nothing came.
func (k *Coordinator) waitAddresses(ctx context.Context) (Addresses, error) {
	o := k.Options
	type source struct {
		gvk   schema.GroupVersionKind
		name  string
		field string
		read  func(*unstructured.Unstructured) string
		set   func(*Addresses, string)
	}
	gw := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: kind}
	}
	var srcs []source
	switch {
	case o.ingress():
		srcs = []source{{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, TargetName,
			"status.loadBalancer.ingress", ingressAddress, func(a *Addresses, v string) { *a = both(v) }}}
	case o.Mesh == MeshGateway && o.Class == ClassLattice:
		http, grpc := k.routesUsed()
		if http {
			srcs = append(srcs, source{gw("HTTPRoute"), TargetName, "metadata.annotations." + AnnLatticeDomain, latticeDomain,
				func(a *Addresses, v string) { a.HTTP = v }})
		}
		if grpc {
			srcs = append(srcs, source{gw("GRPCRoute"), TargetName, "metadata.annotations." + AnnLatticeDomain, latticeDomain,
				func(a *Addresses, v string) { a.GRPC = v }})
		}
	case o.Mesh == MeshGateway:
		srcs = []source{{gw("Gateway"), GatewayName, "status.addresses", gatewayAddress, func(a *Addresses, v string) { *a = both(v) }}}
	}
	var out Addresses
	for _, s := range srcs {
		ri, _, err := k.Cluster.resource(s.gvk, o.Namespace)
		if err != nil {
			return out, k.Cluster.errorf("%s: %v", s.gvk.Kind, oneLine(err))
		}
		for {
			if u, err := ri.Get(ctx, s.name, metav1.GetOptions{}); err == nil {
				if v := s.read(u); v != "" {
					k.say("%s %s answers at %s (its %s)", s.gvk.Kind, s.name, v, s.field)
					s.set(&out, v)
					break
				}
			}
			if !sleepCtx(ctx, 2*time.Second) {
				return out, fmt.Errorf("%s %s/%s got no address within %v: waited on its %s; is its controller running (class %s)?",
					s.gvk.Kind, o.Namespace, s.name, k.TargetWait, s.field, o.Class)
			}
		}
	}
	return out, nil
}

// routesUsed tells which routes the sweep's mesh steps cross: the HTTP
// route (every port but gRPC's) and the gRPC route.
func (k *Coordinator) routesUsed() (http, grpc bool) {
	for _, st := range k.Steps {
		if !stepUsesTarget(st) || directURL(st.URL) {
			continue
		}
		if port(st.URL) == PortGRPC {
			grpc = true
		} else {
			http = true
		}
	}
	return http, grpc
}

func latticeDomain(u *unstructured.Unstructured) string { return u.GetAnnotations()[AnnLatticeDomain] }

// gatewayAddress is a Gateway's first status.addresses value.
func gatewayAddress(u *unstructured.Unstructured) string {
	as, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	for _, a := range as {
		if m, ok := a.(map[string]any); ok {
			if v, ok := m["value"].(string); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

// ingressAddress is an Ingress's first load balancer IP or hostname.
func ingressAddress(u *unstructured.Unstructured) string {
	ings, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
	for _, i := range ings {
		if m, ok := i.(map[string]any); ok {
			for _, key := range []string{"ip", "hostname"} {
				if v, ok := m[key].(string); ok && v != "" {
					return v
				}
			}
		}
	}
	return ""
}
