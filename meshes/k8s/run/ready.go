package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/appmesh"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/worker"
)

// The objects a controller turns into the path a step measures (App
// Mesh's routers and services, a Gateway and its routes) say in their
// status whether it did; until then the path is not there, or not the
// one rendered. A run reads those conditions before its first step.

// readiness is one object whose status must show its controller
// accepted it: unmet says what is not so yet ("" for nothing), met what
// to report once it is.
type readiness struct {
	gvk   schema.GroupVersionKind
	name  string
	unmet func(u *unstructured.Unstructured) []string
	met   func(u *unstructured.Unstructured) string
}

// waitReady waits, until TargetWait has passed, for every object to be
// ready, says what each one's status reads, and refuses the run with
// each unmet condition and its message otherwise.
func (k *Coordinator) waitReady(ctx context.Context, what string, rs []readiness) error {
	deadline := time.Now().Add(k.TargetWait)
	for {
		var unmet, met []string
		for _, r := range rs {
			ref := r.gvk.Kind + " " + k.Options.Namespace + "/" + r.name
			ri, m, err := k.Cluster.Resource(r.gvk, k.Options.Namespace)
			if err != nil {
				return k.Cluster.Errorf("%s: %v", r.gvk.Kind, cluster.OneLine(err))
			}
			if m.Scope.Name() != meta.RESTScopeNameNamespace {
				ref = r.gvk.Kind + " " + r.name
			}
			u, err := ri.Get(ctx, r.name, metav1.GetOptions{})
			if err != nil {
				unmet = append(unmet, ref+": "+cluster.OneLine(err))
				continue
			}
			for _, s := range r.unmet(u) {
				unmet = append(unmet, ref+": "+s)
			}
			if r.met != nil {
				met = append(met, ref+" "+r.met(u))
			}
		}
		if len(unmet) == 0 {
			for _, m := range met {
				k.say("%s", m)
			}
			return nil
		}
		if time.Now().After(deadline) || !worker.Sleep(ctx, k.Poll) {
			return fmt.Errorf("%w: %s not ready within %v: %s", ErrMeshMissing, what, k.TargetWait, strings.Join(unmet, "; "))
		}
	}
}

// condition is a status condition of an object (status.conditions, or
// conds when given: a route's per-parent list).
type condition struct {
	Type, Status, Reason, Message string
	found                         bool
}

func conditionOf(conds []any, typ string) condition {
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		return condition{Type: typ, Status: str("status"), Reason: str("reason"), Message: str("message"), found: true}
	}
	return condition{Type: typ}
}

// unmet says why the condition is not True: its status, reason and
// message as the controller wrote them, or that it has none yet.
func (c condition) unmet() string {
	switch {
	case !c.found:
		return "no " + c.Type + " condition yet"
	case c.Status == "True":
		return ""
	}
	s := c.Type + " is " + c.Status
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// statusConditions checks that each condition type of the object's
// status.conditions is True.
func statusConditions(types ...string) func(u *unstructured.Unstructured) []string {
	return func(u *unstructured.Unstructured) []string {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var out []string
		for _, t := range types {
			if s := conditionOf(conds, t).unmet(); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
}

// appMeshReadiness are the App Mesh objects of the rendering, each with
// the condition its controller sets True once it exists in App Mesh
// (MeshActive, VirtualNodeActive, VirtualRouterActive,
// VirtualServiceActive), and a router's routes, each of which has an
// ARN in status.routeARNs once App Mesh accepted it: a router is active
// with routes App Mesh refused (aws-app-mesh-controller-for-k8s#715).
func appMeshReadiness(objs []*unstructured.Unstructured) []readiness {
	var out []readiness
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if gvk.Group != appmesh.GroupVersion.Group {
			continue
		}
		active := statusConditions(gvk.Kind + "Active")
		r := readiness{gvk: gvk, name: u.GetName(), unmet: active}
		if gvk.Kind == "VirtualRouter" {
			routes, _, _ := unstructured.NestedSlice(u.Object, "spec", "routes")
			var names []string
			for _, rt := range routes {
				if m, ok := rt.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						names = append(names, n)
					}
				}
			}
			r.unmet = func(u *unstructured.Unstructured) []string {
				out := active(u)
				arns, _, _ := unstructured.NestedStringMap(u.Object, "status", "routeARNs")
				for _, n := range names {
					if arns[n] == "" {
						out = append(out, fmt.Sprintf("route %s has no ARN in status.routeARNs: App Mesh has not accepted it "+
							"(the controller's log says why: kubectl -n appmesh-system logs deploy/appmesh-controller)", n))
					}
				}
				return out
			}
		}
		r.met = func(*unstructured.Unstructured) string { return "is active in App Mesh" }
		out = append(out, r)
	}
	return out
}

// checkAppMesh waits for the App Mesh controller to have created every
// object of the rendering in App Mesh, its routes included: an injected
// Envoy alone (the target's check) does not make a path.
func (k *Coordinator) checkAppMesh(ctx context.Context) error {
	objs, _, err := k.Objects()
	if err != nil {
		return err
	}
	return k.waitReady(ctx, "mesh "+k8s.MeshAppMesh+": the App Mesh objects", appMeshReadiness(objs))
}

// gatewayReadiness are the Gateway, which its implementation must have
// Accepted and Programmed, and each route of the rendering, which must be
// Accepted by the Gateway it names (status.parents, the entry of that
// Gateway) with its references resolved where the implementation says.
func gatewayReadiness(o k8s.Options) []readiness {
	gw := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: kind}
	}
	name := o.GatewayObject()
	out := []readiness{{gvk: gw("Gateway"), name: name, unmet: statusConditions("Accepted", "Programmed"),
		met: func(u *unstructured.Unstructured) string {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			s := "is Accepted and Programmed"
			if m := conditionOf(conds, "Programmed").Message; m != "" {
				s += " (" + m + ")"
			}
			return s
		}}}
	for _, r := range o.Routes {
		out = append(out, readiness{gvk: gw(k8s.RouteKind(r)), name: k8s.TargetName,
			unmet: func(u *unstructured.Unstructured) []string { return routeUnmet(u, name) },
			met:   func(*unstructured.Unstructured) string { return "is Accepted by Gateway " + name }})
	}
	return out
}

// routeUnmet says what of a route's status for its Gateway is not so: no
// entry of that Gateway's yet, Accepted not True, or ResolvedRefs False.
func routeUnmet(u *unstructured.Unstructured, gateway string) []string {
	parents, _, _ := unstructured.NestedSlice(u.Object, "status", "parents")
	var out []string
	seen := false
	for _, p := range parents {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if n, _, _ := unstructured.NestedString(m, "parentRef", "name"); n != gateway {
			continue
		}
		seen = true
		conds, _, _ := unstructured.NestedSlice(m, "conditions")
		if s := conditionOf(conds, "Accepted").unmet(); s != "" {
			out = append(out, s)
		}
		if c := conditionOf(conds, "ResolvedRefs"); c.found && c.Status != "True" {
			out = append(out, c.unmet())
		}
	}
	if !seen {
		out = append(out, "no status from Gateway "+gateway+"'s controller yet (status.parents)")
	}
	return out
}

// checkGateway waits for the Gateway and its routes to be accepted and
// programmed, and says what their status reads: a Gateway its
// implementation refused, or a route it did not attach, has no path
// (VPC Lattice: "VPC Lattice Service Network not found" when no service
// network has the Gateway's name, --gateway-name).
func (k *Coordinator) checkGateway(ctx context.Context) error {
	return k.waitReady(ctx, fmt.Sprintf("class %s: Gateway %s and its routes", k.Options.Class, k.Options.GatewayObject()), gatewayReadiness(k.Options))
}
