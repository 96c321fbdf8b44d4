package k8s

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A mesh that is not there makes its path a plain one: the annotations of
// a mesh nobody installed are ignored, the pods start without a proxy,
// and the comparison would read that the mesh costs nothing. A run checks
// what the mesh must have done before it measures anything.

// ErrMeshMissing is a mesh, ingress controller or gateway that is not
// running on the cluster: the run measures nothing.
var ErrMeshMissing = errors.New("the mesh is not running")

// sidecarContainer is the proxy container a sidecar mesh injects.
func sidecarContainer(mesh string) string {
	switch mesh {
	case MeshIstio:
		return "istio-proxy"
	case MeshLinkerd:
		return "linkerd-proxy"
	case MeshAppMesh:
		return "envoy"
	}
	return ""
}

// hasContainer tells whether a pod runs a container of that name, as an
// app container or as a native sidecar (an init container).
func hasContainer(p *corev1.Pod, name string) bool {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	return false
}

// injectorHint says what injects a mesh's sidecar into the namespace.
func (o Options) injectorHint() string {
	switch o.Mesh {
	case MeshIstio:
		if o.Revision != "" {
			return fmt.Sprintf("is Istio revision %s installed, its injector watching namespaces labelled %s=%s?", o.Revision, labelIstioRev, o.Revision)
		}
		return fmt.Sprintf("is Istio installed, its injector watching namespaces labelled %s=enabled?", labelIstioInject)
	case MeshLinkerd:
		return "is Linkerd installed (linkerd check), its proxy injector running?"
	case MeshAppMesh:
		return "is the App Mesh controller installed, its sidecar injector running?"
	}
	return ""
}

// checkMesh refuses to measure, once the target is ready, a mesh that is
// not there: a sidecar mesh whose proxy is not in the target pod, an
// ambient mesh without a ztunnel on the target's node.
func (k *Coordinator) checkMesh(ctx context.Context) error {
	o := k.Options
	pods, err := k.Cluster.Client.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelName + "=" + TargetName})
	if err != nil {
		return k.Cluster.errorf("target pods: %v", oneLine(err))
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if c := sidecarContainer(o.Mesh); c != "" && o.injectServer() && !hasContainer(p, c) {
			return fmt.Errorf("%w: mesh %s: the target pod %s has no %s container, nothing injected it (%s); "+
				"measured so, the mesh's path would be as direct as the baseline", ErrMeshMissing, o.Mesh, p.Name, c, o.injectorHint())
		}
		if o.Mesh == MeshIstioAmbient || o.Mesh == MeshIstioWaypoint {
			if err := k.checkZtunnel(ctx, p.Spec.NodeName); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkZtunnel wants a running ztunnel on the node (Istio's ambient mode
// runs it as the DaemonSet istio-system/ztunnel).
func (k *Coordinator) checkZtunnel(ctx context.Context, node string) error {
	l, err := k.Cluster.Client.CoreV1().Pods("istio-system").List(ctx, metav1.ListOptions{LabelSelector: "app=ztunnel", FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return k.Cluster.errorf("ztunnel pods: %v", oneLine(err))
	}
	for _, p := range l.Items {
		if p.Status.Phase == corev1.PodRunning {
			return nil
		}
	}
	return fmt.Errorf("%w: mesh %s: no ztunnel runs on node %s (pods app=ztunnel in istio-system): is Istio installed in ambient mode (istioctl install --set profile=ambient)? "+
		"measured so, the mesh's path would be as direct as the baseline", ErrMeshMissing, k.Options.Mesh, node)
}

// checkClass refuses, before waiting for an address, an ingress or
// gateway class the cluster does not have: no controller would ever
// give the Ingress or the Gateway one.
func (k *Coordinator) checkClass(ctx context.Context) error {
	o := k.Options
	var gvk schema.GroupVersionKind
	var what string
	switch o.Mesh {
	case MeshIngressNginx:
		gvk, what = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}, "is ingress-nginx installed? its controller creates the class; --class names another"
	case MeshGateway:
		gvk, what = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayClass"}, "is the Gateway API implementation installed? --class names its GatewayClass"
	default:
		return nil
	}
	ri, _, err := k.Cluster.resource(gvk, "")
	if err != nil {
		return k.Cluster.errorf("%s: %v", gvk.Kind, oneLine(err))
	}
	_, err = ri.Get(ctx, o.Class, metav1.GetOptions{})
	switch {
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
		return k.Cluster.errorf("%s %s: %v", gvk.Kind, o.Class, oneLine(err))
	}
	return nil
}
