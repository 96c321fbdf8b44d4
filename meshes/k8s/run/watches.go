package run

import (
	"fmt"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cost"
	"loadgen/results"
)

// Names of the sidecars' watches in reports and assertions (cpu.client-proxy,
// mem.server-proxy), whatever the mesh: the same assertion then holds
// across meshes.
const (
	ClientProxy = "client-proxy"
	ServerProxy = "server-proxy"
)

// RoleControlPlane is the role of a mesh's control-plane watch, beside
// "proxy" and "target".
const RoleControlPlane = results.RoleControlPlane

// Watches are the containers whose cost step index of a run records, as
// far as the options tell them, and a record for each side that has no
// sidecar in the mode (--mode serveronly: the workers; clientonly: the
// target), which has no figure and needs none. A sidecar mesh's proxies
// are two watches: the workers' of this step only (not those of the step
// before, which may still be terminating) and the target's. Each
// container is counted once: the target's figure is its own servers'
// containers, not its pod's, which holds its sidecar too.
func Watches(o k8s.Options, step int) ([]cost.Watch, []results.ProcessCost) {
	target := cost.Watch{Name: "target", Role: "target", Namespace: o.Namespace, Selector: o.TargetSelector(), Containers: k8s.TargetContainers()}
	var ws []cost.Watch
	var none []results.ProcessCost
	if c := k8s.SidecarContainer(o.Mesh); c != "" {
		sides := []struct {
			name, side, selector, who string
			inject                    bool
		}{
			{ClientProxy, "client", k8s.StepSelector(o.RunID, step), "the workers", o.InjectClient()},
			{ServerProxy, "server", o.TargetSelector(), "the target", o.InjectServer()},
		}
		for _, s := range sides {
			if !s.inject {
				none = append(none, results.ProcessCost{Name: s.name, Role: "proxy", Side: s.side,
					Selector: fmt.Sprintf("k8s:%s/%s/%s", o.Namespace, s.selector, c),
					NoProxy:  fmt.Sprintf("%s run no %s in --mode %s", s.who, c, o.Mode)})
				continue
			}
			ws = append(ws, cost.Watch{Name: s.name, Role: "proxy", Side: s.side, Namespace: o.Namespace, Selector: s.selector, Containers: []string{c}})
		}
	}
	switch o.Mesh {
	case k8s.MeshIstioAmbient, k8s.MeshIstioWaypoint:
		ws = append(ws, cost.Watch{Name: "ztunnel", Role: "proxy", Namespace: "istio-system", Selector: "app=ztunnel",
			NodesOf: &cost.PodSet{Namespace: o.Namespace, Selector: k8s.Selector(o.RunID)}})
		if o.Mesh == k8s.MeshIstioWaypoint {
			ws = append(ws, cost.Watch{Name: "waypoint", Role: "proxy", Namespace: o.Namespace,
				Selector: "gateway.networking.k8s.io/gateway-name=" + k8s.WaypointName})
		}
	case k8s.MeshIngressNginx:
		ws = append(ws, cost.Watch{Name: "ingress-nginx", Role: "proxy", Namespace: o.IngressNamespace,
			Selector: "app.kubernetes.io/name=ingress-nginx,app.kubernetes.io/component=controller", Containers: []string{"controller"}})
	}
	// The control plane's pods, whole (Linkerd's carry their own proxies:
	// its install's cost); Validate has read the flag.
	cps, _ := o.ControlPlanes()
	for _, cp := range cps {
		ws = append(ws, cost.Watch{Name: cp.Name, Role: RoleControlPlane, Namespace: cp.Namespace, Selector: cp.Selector})
	}
	// An ingress's or a gateway's proxy (mesh ingress, gateway) is found
	// from the address the cluster publishes: Coordinator.proxyWatches.
	return append(ws, target), none
}
