package run

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/worker"
)

// workerCheck is what a step's worker pods must show for their figures
// to be the path's: the workers of a sidecar mesh that places one on
// them carry its proxy; in an ambient mesh, a mesh step's workers are
// enrolled (istio-cni's ambient.istio.io/redirection=enabled) on a node
// with a ready ztunnel, and a direct step's are not enrolled. A worker of
// a mesh step left out of the mesh would send its requests straight to
// the target, as the baseline does. Nil: nothing to check.
func (k *Coordinator) workerCheck(direct bool) worker.PodCheck {
	o := k.Options
	var checks []worker.PodCheck
	if c := k8s.SidecarContainer(o.Mesh); c != "" && o.InjectClient() {
		checks = append(checks, func(_ context.Context, p *corev1.Pod) string {
			if cluster.HasContainer(p, c) {
				return ""
			}
			return fmt.Sprintf("has no %s container, nothing injected it (%s)", c, o.InjectorHint())
		})
	}
	if o.DirectTarget() {
		ztunnel := map[string]error{} // by node: asked once per node and step
		checks = append(checks, func(ctx context.Context, p *corev1.Pod) string {
			if !worker.Started(p) {
				return "" // istio-cni enrols a pod as its network is set up
			}
			enrolled := p.Annotations[k8s.AnnAmbientRedirection] == "enabled"
			switch {
			case direct && enrolled:
				return fmt.Sprintf("loads the direct path but was enrolled in the ambient mesh (%s=enabled) despite its %s=none label: "+
					"the baseline would cross ztunnel", k8s.AnnAmbientRedirection, k8s.LabelDataplaneMode)
			case direct:
				return ""
			case !enrolled:
				return fmt.Sprintf("loads the mesh path but is not enrolled in the ambient mesh (no %s=enabled annotation): "+
					"is istio-cni running on node %s? its requests would skip the client's ztunnel", k8s.AnnAmbientRedirection, p.Spec.NodeName)
			}
			err, seen := ztunnel[p.Spec.NodeName]
			if !seen {
				_, err = k.readyZtunnel(ctx, p.Spec.NodeName)
				ztunnel[p.Spec.NodeName] = err
			}
			if err != nil {
				return "runs where the mesh is not: " + err.Error()
			}
			return ""
		})
	}
	if len(checks) == 0 {
		return nil
	}
	return func(ctx context.Context, p *corev1.Pod) string {
		for _, c := range checks {
			if why := c(ctx, p); why != "" {
				return why
			}
		}
		return ""
	}
}

// stepWatches are what a step records: the proxies found at run time
// (proxyWatches: an ingress's or a gateway's, ingress-nginx's controller
// of --class) and the mesh's watches (watches.go), a node agent's in the
// namespace checkMesh found it in (ztunnel's chart installs it in any).
func (k *Coordinator) stepWatches(step []cost.Watch) []cost.Watch {
	var ws []cost.Watch
	for _, w := range step {
		switch {
		case w.Name == "ztunnel" && k.ztunnelNamespace != "":
			w.Namespace = k.ztunnelNamespace
		case w.Name == "ingress-nginx" && k.Options.Mesh == k8s.MeshIngressNginx:
			continue // every controller of the namespace: proxyWatches found the class's
		case w.Role == RoleControlPlane && k.inProxy[w.Name]:
			continue // in the proxy's pods: counted by its watch
		}
		ws = append(ws, w)
	}
	return append(slices.Clone(k.proxies), ws...)
}
