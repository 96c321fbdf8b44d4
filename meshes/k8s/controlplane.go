package k8s

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// ControlPlane is a set of a mesh's control-plane pods whose CPU and
// memory a run records beside its proxies' (Istio's performance page
// reports istiod's beside the sidecars'): a watch of whole pods.
type ControlPlane struct {
	Name      string // in reports and assertions: istiod, linkerd-control-plane …
	Namespace string
	Selector  string // label selector of its pods
}

// NoControlPlane is --control-plane none: no control plane recorded.
const NoControlPlane = "none"

// DefaultControlPlanes are a mesh's control planes as their installs
// label them: istiod (app=istiod in istio-system, Istio's Helm chart and
// istioctl), Linkerd's destination, identity and proxy-injector (each
// labelled linkerd.io/control-plane-component in the linkerd namespace),
// the App Mesh controller (appmesh-system, its Helm chart's
// app.kubernetes.io/name); a gateway's or an ingress's controller where
// it runs apart from its proxy, as its quick start installs it: Envoy
// Gateway's (class eg: control-plane=envoy-gateway in
// envoy-gateway-system), NGINX Gateway Fabric's (class nginx:
// app.kubernetes.io/name=nginx-gateway-fabric in nginx-gateway), the
// Cilium operator (class cilium: io.cilium/app=operator in kube-system).
// ingress-nginx's and Traefik's controllers are their proxies too (one
// process): counted once, by the proxy's watch (ControlPlaneNote says
// so); loadgen's sidecar mesh has none.
func DefaultControlPlanes(o Options) []ControlPlane {
	istiod := ControlPlane{Name: "istiod", Namespace: "istio-system", Selector: "app=istiod"}
	switch {
	case o.istio(), o.Mesh == MeshGateway && o.Class == "istio":
		return []ControlPlane{istiod}
	case o.Mesh == MeshLinkerd:
		return []ControlPlane{{Name: "linkerd-control-plane", Namespace: "linkerd", Selector: "linkerd.io/control-plane-component"}}
	case o.Mesh == MeshAppMesh:
		return []ControlPlane{{Name: "appmesh-controller", Namespace: "appmesh-system", Selector: "app.kubernetes.io/name=appmesh-controller"}}
	case o.Mesh == MeshGateway && o.Class == ClassEnvoyGateway:
		return []ControlPlane{{Name: "envoy-gateway", Namespace: "envoy-gateway-system", Selector: "control-plane=envoy-gateway"}}
	case o.Mesh == MeshGateway && o.Class == ClassNginxGatewayFabric:
		return []ControlPlane{{Name: "nginx-gateway-fabric", Namespace: "nginx-gateway", Selector: "app.kubernetes.io/name=nginx-gateway-fabric"}}
	case (o.Mesh == MeshGateway || o.Mesh == MeshIngress) && o.Class == ClassCilium:
		return []ControlPlane{{Name: "cilium-operator", Namespace: "kube-system", Selector: "io.cilium/app=operator"}}
	}
	return nil
}

// DefaultControlPlanesHelp is --control-plane's word on its default, from
// DefaultControlPlanes: each mesh's own control plane, the gateway
// classes' controllers, and the controllers that are their proxies.
func DefaultControlPlanesHelp() string {
	one := func(o Options) ControlPlane { return DefaultControlPlanes(o)[0] }
	istiod, linkerd, appmesh := one(Options{Mesh: MeshIstio}), one(Options{Mesh: MeshLinkerd}), one(Options{Mesh: MeshAppMesh})
	classes := []string{ClassEnvoyGateway, ClassNginxGatewayFabric, ClassCilium}
	var namespaces []string
	for _, c := range classes {
		namespaces = append(namespaces, one(Options{Mesh: MeshGateway, Class: c}).Namespace)
	}
	return fmt.Sprintf("the mesh's own: %s=%s/%s; Linkerd's in %s; %s in %s; "+
		"for gateway classes %s and %s their controller's pods (%s); %s and %s: none apart, their controller is their proxy",
		istiod.Name, istiod.Namespace, istiod.Selector, linkerd.Namespace, appmesh.Name, appmesh.Namespace,
		strings.Join(classes[:len(classes)-1], ", "), classes[len(classes)-1], strings.Join(namespaces, ", "),
		MeshIngressNginx, ClassTraefik)
}

// The classes whose control planes DefaultControlPlanes knows, as their
// quick starts name their GatewayClass (and Cilium its IngressClass).
const (
	ClassEnvoyGateway       = "eg"
	ClassNginxGatewayFabric = "nginx"
	ClassCilium             = "cilium"
	ClassTraefik            = "traefik"
)

// ControlPlaneNote says why a run records no control plane of an ingress
// or a gateway by default, and how to name one: "" when it records one,
// was told which (--control-plane), or the mesh has none. A controller
// that is its proxy too (ingress-nginx, Traefik) is counted once, in the
// proxy's figure.
func ControlPlaneNote(o Options) string {
	if len(o.ControlPlane) > 0 || len(DefaultControlPlanes(o)) > 0 || !o.Published() {
		return ""
	}
	const name = "(name another with --control-plane NAME=NAMESPACE/SELECTOR)"
	switch {
	case o.Mesh == MeshIngressNginx:
		return "ingress-nginx: the controller is the proxy and the control plane at once (one process watches the API and runs nginx): " +
			"counted once, in the ingress-nginx figure, and no control plane apart " + name
	case o.Class == ClassTraefik:
		return fmt.Sprintf("class %s: Traefik's controller is its proxy too (one process): counted once, in the %s figure, and no control plane apart %s",
			o.Class, o.Mesh, name)
	case o.Mesh == MeshGateway && o.Class == ClassLattice:
		return fmt.Sprintf("class %s: the proxy and its control plane are AWS's, outside the cluster: the steps record no control plane %s", o.Class, name)
	}
	return fmt.Sprintf("class %s: loadgen knows no documented control plane for it: the steps record none; "+
		"name its pods with --control-plane NAME=NAMESPACE/SELECTOR (or --control-plane none)", o.Class)
}

// ParseControlPlane reads --control-plane NAMESPACE/SELECTOR or
// NAME=NAMESPACE/SELECTOR (the name defaults to the namespace).
func ParseControlPlane(s string) (ControlPlane, error) {
	bad := func(why string) (ControlPlane, error) {
		return ControlPlane{}, fmt.Errorf("--control-plane %q: %s (want NAMESPACE/SELECTOR or NAME=NAMESPACE/SELECTOR, e.g. istiod=istio-system/app=istiod, or none)", s, why)
	}
	var cp ControlPlane
	rest := s
	if i := strings.IndexAny(s, "=/"); i >= 0 && s[i] == '=' {
		if cp.Name, rest = s[:i], s[i+1:]; !dnsLabel.MatchString(cp.Name) {
			return bad("the name is not a DNS label")
		}
	}
	ns, sel, ok := strings.Cut(rest, "/")
	switch {
	case !ok || strings.TrimSpace(sel) == "":
		return bad("no selector")
	case !dnsLabel.MatchString(ns):
		return bad("the namespace is not a DNS label")
	}
	if _, err := labels.Parse(sel); err != nil {
		return bad("the selector: " + err.Error())
	}
	cp.Namespace, cp.Selector = ns, sel
	if cp.Name == "" {
		cp.Name = ns
	}
	return cp, nil
}

// ControlPlanes are the control planes a run records: --control-plane's,
// or the mesh's own (DefaultControlPlanes); none for --control-plane none.
func (o Options) ControlPlanes() ([]ControlPlane, error) {
	if len(o.ControlPlane) == 0 {
		return DefaultControlPlanes(o), nil
	}
	if len(o.ControlPlane) == 1 && o.ControlPlane[0] == NoControlPlane {
		return nil, nil
	}
	var out []ControlPlane
	seen := map[string]bool{}
	for _, s := range o.ControlPlane {
		if s == NoControlPlane {
			return nil, fmt.Errorf("--control-plane none stands alone")
		}
		cp, err := ParseControlPlane(s)
		if err != nil {
			return nil, err
		}
		if seen[cp.Name] {
			return nil, fmt.Errorf("--control-plane: the name %s twice (name them: NAME=NAMESPACE/SELECTOR)", cp.Name)
		}
		seen[cp.Name] = true
		out = append(out, cp)
	}
	return out, nil
}
