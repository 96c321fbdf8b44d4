package run

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/worker"
)

// both is one address for every route.
func both(a string) k8s.Addresses { return k8s.Addresses{HTTP: a, GRPC: a} }

// waitAddresses waits for what the ingress or the gateway publishes as
// the mesh path's address, and says which object and field it waited on
// when nothing came.
func (k *Coordinator) waitAddresses(ctx context.Context) (k8s.Addresses, error) {
	o := k.Options
	via := o.ViaOf()
	if via != k8s.ViaService {
		return k.waitPublished(ctx, k.TargetWait)
	}
	a, ok, err := k.serviceAddresses(ctx)
	if err != nil || ok {
		return a, err
	}
	// No Service of the controller to be found: its published address,
	// if the controller publishes one as it takes the route up, else one
	// line naming the flag that names the Service, not --target-wait's
	// wait for an address that may never come.
	grace := k.PublishWait
	if grace == 0 {
		grace = DefaultPublishWait
	}
	grace = min(k.TargetWait, grace)
	pctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	a, err = k.waitPublished(pctx, grace)
	if err != nil {
		if ctx.Err() != nil {
			return a, err
		}
		return a, fmt.Errorf("%s: no Service of its controller found, and %v: name the controller's Service with "+
			"--ingress-service NAMESPACE/NAME (or --via published to wait --target-wait for the address)", proxyWhat(o), err)
	}
	return k.publishedService(ctx, a), nil
}

// DefaultPublishWait is Coordinator.PublishWait's default: long enough
// for a running controller to take the route up and publish it.
const DefaultPublishWait = 30 * time.Second

// proxyWhat names the ingress or the gateway: "--mesh ingress --class traefik".
func proxyWhat(o k8s.Options) string {
	if o.Class == "" {
		return "--mesh " + o.Mesh
	}
	return "--mesh " + o.Mesh + " --class " + o.Class
}

// waitPublished waits for the addresses the ingress or the gateway
// publishes, within (ctx's bound, which the error names).
func (k *Coordinator) waitPublished(ctx context.Context, within time.Duration) (k8s.Addresses, error) {
	o := k.Options
	type source struct {
		gvk   schema.GroupVersionKind
		name  string
		field string
		read  func(*unstructured.Unstructured) string
		set   func(*k8s.Addresses, string)
	}
	gw := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: kind}
	}
	var srcs []source
	switch {
	case o.UsesIngress():
		srcs = []source{{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, k8s.TargetName,
			"status.loadBalancer.ingress", ingressAddress, func(a *k8s.Addresses, v string) { *a = both(v) }}}
	case o.Mesh == k8s.MeshGateway && o.Class == k8s.ClassLattice:
		http, grpc := k.routesUsed()
		if http {
			srcs = append(srcs, source{gw("HTTPRoute"), k8s.TargetName, "metadata.annotations." + k8s.AnnLatticeDomain, latticeDomain,
				func(a *k8s.Addresses, v string) { a.HTTP = v }})
		}
		if grpc {
			srcs = append(srcs, source{gw("GRPCRoute"), k8s.TargetName, "metadata.annotations." + k8s.AnnLatticeDomain, latticeDomain,
				func(a *k8s.Addresses, v string) { a.GRPC = v }})
		}
	case o.Mesh == k8s.MeshGateway:
		srcs = []source{{gw("Gateway"), o.GatewayObject(), "status.addresses", gatewayAddress, func(a *k8s.Addresses, v string) { *a = both(v) }}}
	}
	var out k8s.Addresses
	for _, s := range srcs {
		ri, _, err := k.Cluster.Resource(s.gvk, o.Namespace)
		if err != nil {
			return out, k.Cluster.Errorf("%s: %v", s.gvk.Kind, cluster.OneLine(err))
		}
		for {
			if u, err := ri.Get(ctx, s.name, metav1.GetOptions{}); err == nil {
				if v := s.read(u); v != "" {
					k.say("%s %s answers at %s (its %s)", s.gvk.Kind, s.name, v, s.field)
					s.set(&out, v)
					break
				}
			}
			if !worker.Sleep(ctx, 2*time.Second) {
				return out, fmt.Errorf("%s %s/%s got no address within %v: waited on its %s; is its controller running (class %s)?",
					s.gvk.Kind, o.Namespace, s.name, within, s.field, o.Class)
			}
		}
	}
	return out, nil
}

// routesUsed tells which routes the sweep's mesh steps cross: the HTTP
// route (every port but gRPC's) and the gRPC route.
func (k *Coordinator) routesUsed() (http, grpc bool) {
	for _, st := range k.Steps {
		if !st.UsesTarget() || k8s.DirectURL(st.URL) {
			continue
		}
		if port(st.URL) == k8s.PortGRPC {
			grpc = true
		} else {
			http = true
		}
	}
	return http, grpc
}

func latticeDomain(u *unstructured.Unstructured) string {
	return u.GetAnnotations()[k8s.AnnLatticeDomain]
}

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
