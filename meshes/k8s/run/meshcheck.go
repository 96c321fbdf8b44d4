package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/worker"
)

// A mesh that is not there makes its path a plain one: the annotations of
// a mesh nobody installed are ignored, the pods start without a proxy,
// and the comparison would read that the mesh costs nothing. A run checks
// what the mesh must have done before it measures anything.

// ErrMeshMissing is a mesh, ingress controller or gateway that is not
// running on the cluster: the run measures nothing.
var ErrMeshMissing = errors.New("the mesh is not running")

// checkMesh refuses to measure, once the target is ready, a mesh that is
// not there: a sidecar mesh whose proxy is not in the target pod, an
// ambient mesh without a ready ztunnel on the mesh target's node (the
// direct path's target is out of the mesh: its node needs none). Each
// step's workers are checked too (workerCheck).
func (k *Coordinator) checkMesh(ctx context.Context) error {
	o := k.Options
	pods, err := k.Cluster.Client.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.TargetSelector()})
	if err != nil {
		return k.Cluster.Errorf("target pods: %v", cluster.OneLine(err))
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if c := k8s.SidecarContainer(o.Mesh); c != "" && o.InjectServer() && !cluster.HasContainer(p, c) {
			return fmt.Errorf("%w: mesh %s: the target pod %s has no %s container, nothing injected it (%s); "+
				"measured so, the mesh's path would be as direct as the baseline", ErrMeshMissing, o.Mesh, p.Name, c, o.InjectorHint())
		}
		if o.DirectTarget() {
			if p.Labels[k8s.LabelName] != k8s.TargetDirectName {
				zt, err := k.readyZtunnel(ctx, p.Spec.NodeName)
				if err != nil {
					return err
				}
				k.ztunnelNamespace = zt.Namespace
			}
			if err := checkEnrolled(o.Mesh, p); err != nil {
				return err
			}
		}
	}
	switch o.Mesh {
	case k8s.MeshIstioWaypoint:
		return k.checkWaypoint(ctx)
	case k8s.MeshAppMesh:
		return k.checkAppMesh(ctx)
	}
	return nil
}

// checkEnrolled wants the ambient mesh's target pod enrolled (istio-cni
// marks the pod it redirects to ztunnel) and the direct path's target
// not: ztunnel would carry the baseline too.
func checkEnrolled(mesh string, p *corev1.Pod) error {
	enrolled := p.Annotations[k8s.AnnAmbientRedirection] == "enabled"
	switch direct := p.Labels[k8s.LabelName] == k8s.TargetDirectName; {
	case !direct && !enrolled:
		return fmt.Errorf("%w: mesh %s: the target pod %s is not enrolled in the ambient mesh (no %s=enabled annotation): "+
			"is istio-cni running on its node, the namespace labelled %s=ambient? measured so, the mesh's path would be as direct as the baseline",
			ErrMeshMissing, mesh, p.Name, k8s.AnnAmbientRedirection, k8s.LabelDataplaneMode)
	case direct && enrolled:
		return fmt.Errorf("%w: mesh %s: the direct path's target pod %s was enrolled in the ambient mesh despite its %s=none label: "+
			"the baseline would cross ztunnel (is this Istio older than 1.22?)", ErrMeshMissing, mesh, p.Name, k8s.LabelDataplaneMode)
	}
	return nil
}

// checkWaypoint wants the waypoint programmed: until then its
// namespace's traffic skips it.
func (k *Coordinator) checkWaypoint(ctx context.Context) error {
	gvk := schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}
	ri, _, err := k.Cluster.Resource(gvk, k.Options.Namespace)
	if err != nil {
		return k.Cluster.Errorf("waypoint: %v", cluster.OneLine(err))
	}
	deadline := time.Now().Add(k.TargetWait)
	for {
		u, err := ri.Get(ctx, k8s.WaypointName, metav1.GetOptions{})
		if err == nil && conditionTrue(u.Object, "Programmed") {
			return nil
		}
		if time.Now().After(deadline) || !worker.Sleep(ctx, 2*time.Second) {
			why := "it has no Programmed=True condition"
			if err != nil {
				why = cluster.OneLine(err)
			}
			return fmt.Errorf("%w: mesh %s: the waypoint (Gateway %s/%s, class istio-waypoint) was not programmed within %v: %s; "+
				"is Istio installed in ambient mode with its waypoint class?", ErrMeshMissing, k.Options.Mesh, k.Options.Namespace, k8s.WaypointName, k.TargetWait, why)
		}
	}
}

// conditionTrue tells whether an object's status has the condition of
// that type with status True.
func conditionTrue(obj map[string]any, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// ZtunnelSelector is the label of Istio's ztunnel pods (its chart's
// DaemonSet template), in whatever namespace it was installed.
const ZtunnelSelector = "app=ztunnel"

// errNoZtunnel is a node without a ready ztunnel.
type errNoZtunnel struct {
	mesh, node, why string
}

func (e errNoZtunnel) Error() string {
	return fmt.Sprintf("%v: mesh %s: no ready ztunnel on node %s (pods %s, any namespace: %s): is Istio installed in ambient mode "+
		"(istioctl install --set profile=ambient)? measured so, the mesh's path would be as direct as the baseline", ErrMeshMissing, e.mesh, e.node, ZtunnelSelector, e.why)
}

func (e errNoZtunnel) Unwrap() error { return ErrMeshMissing }

// readyZtunnel is the ready ztunnel pod on the node. Istio's ambient
// mode runs it as a DaemonSet of its chart's namespace: istio-system by
// default, kube-system on some platforms, so every namespace is looked in.
func (k *Coordinator) readyZtunnel(ctx context.Context, node string) (*corev1.Pod, error) {
	l, err := k.Cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: ZtunnelSelector, FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, k.Cluster.Errorf("ztunnel pods: %v", cluster.OneLine(err))
	}
	why := "none runs there"
	for i := range l.Items {
		p := &l.Items[i]
		if p.Spec.NodeName != node {
			continue
		}
		if podReady(p) {
			return p, nil
		}
		why = fmt.Sprintf("pod %s/%s is %s", p.Namespace, p.Name, cluster.PodReason(p))
	}
	return nil, errNoZtunnel{k.Options.Mesh, node, why}
}

// podReady tells whether a pod runs with its Ready condition true.
func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// checkClass refuses, before waiting for an address, an ingress or
// gateway class the cluster does not have: no controller would ever
// give the Ingress or the Gateway one.
func (k *Coordinator) checkClass(ctx context.Context) error {
	o := k.Options
	var gvk schema.GroupVersionKind
	var what string
	switch o.Mesh {
	case k8s.MeshIngressNginx:
		gvk, what = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}, "is ingress-nginx installed? its controller creates the class; --class names another"
	case k8s.MeshIngress:
		gvk, what = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}, "is the ingress controller installed? --class names its IngressClass"
	case k8s.MeshGateway:
		gvk, what = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayClass"}, "is the Gateway API implementation installed? --class names its GatewayClass"
	default:
		return nil
	}
	ri, _, err := k.Cluster.Resource(gvk, "")
	if err != nil {
		return k.Cluster.Errorf("%s: %v", gvk.Kind, cluster.OneLine(err))
	}
	cls, err := ri.Get(ctx, o.Class, metav1.GetOptions{})
	switch {
	case err == nil && o.Mesh == k8s.MeshGateway && !conditionTrue(cls.Object, "Accepted"):
		ctl, _, _ := unstructured.NestedString(cls.Object, "spec", "controllerName")
		return fmt.Errorf("%w: GatewayClass %s is not accepted by its controller %s (no Accepted=True condition): "+
			"is the implementation running?", ErrMeshMissing, o.Class, ctl)
	case apierrors.IsNotFound(err):
		var names []string
		if l, lerr := ri.List(ctx, metav1.ListOptions{}); lerr == nil {
			for _, it := range l.Items {
				names = append(names, it.GetName())
			}
		}
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return fmt.Errorf("%w: %s %s does not exist (the cluster has %s): %s", ErrMeshMissing, gvk.Kind, o.Class, have, what)
	case err != nil:
		return k.Cluster.Errorf("%s %s: %v", gvk.Kind, o.Class, cluster.OneLine(err))
	}
	return nil
}
