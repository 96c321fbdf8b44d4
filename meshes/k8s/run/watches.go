package run

import (
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cost"
)

// watches are the containers whose cost a mesh's steps record, as far as
// the options tell them.
func watches(o k8s.Options) []cost.Watch {
	own := k8s.Selector("")
	target := cost.Watch{Name: "target", Role: "target", Namespace: o.Namespace, Selector: o.TargetSelector()}
	var ws []cost.Watch
	switch o.Mesh {
	case k8s.MeshIstio:
		ws = append(ws, cost.Watch{Name: "istio-proxy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "istio-proxy"})
	case k8s.MeshIstioAmbient, k8s.MeshIstioWaypoint:
		ws = append(ws, cost.Watch{Name: "ztunnel", Role: "proxy", Namespace: "istio-system", Selector: "app=ztunnel",
			NodesOf: &cost.PodSet{Namespace: o.Namespace, Selector: k8s.Selector(o.RunID)}})
		if o.Mesh == k8s.MeshIstioWaypoint {
			ws = append(ws, cost.Watch{Name: "waypoint", Role: "proxy", Namespace: o.Namespace,
				Selector: "gateway.networking.k8s.io/gateway-name=" + k8s.WaypointName})
		}
	case k8s.MeshLinkerd:
		ws = append(ws, cost.Watch{Name: "linkerd-proxy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "linkerd-proxy"})
	case k8s.MeshSidecar:
		ws = append(ws, cost.Watch{Name: k8s.ContainerSidecar, Role: "proxy", Namespace: o.Namespace, Selector: own, Container: k8s.ContainerSidecar})
	case k8s.MeshAppMesh:
		ws = append(ws, cost.Watch{Name: "envoy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "envoy"})
	case k8s.MeshIngressNginx:
		ws = append(ws, cost.Watch{Name: "ingress-nginx", Role: "proxy", Namespace: o.IngressNamespace,
			Selector: "app.kubernetes.io/name=ingress-nginx,app.kubernetes.io/component=controller", Container: "controller"})
	}
	// An ingress's or a gateway's proxy (mesh ingress, gateway) is found
	// from the address the cluster publishes: Coordinator.proxyWatches.
	return append(ws, target)
}
