package k8s

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s/appmesh"
)

func appMeshRouter(t *testing.T, objs []*unstructured.Unstructured) appmesh.VirtualRouter {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == "VirtualRouter" {
			var vr appmesh.VirtualRouter
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &vr); err != nil {
				t.Fatal(err)
			}
			return vr
		}
	}
	t.Fatal("no VirtualRouter rendered")
	return appmesh.VirtualRouter{}
}

// TestAppMeshRoutesMatchPort checks that a router with several listeners has
// routes that each name their listener's port, or App Mesh refuses them:
// "Route must define a port match criteria if the Virtual Router has multiple
// listeners" (App Mesh's BadRequestException, in
// aws-app-mesh-controller-for-k8s#710 and #715; the controller carries
// a gRPC route's match.port to App Mesh since v1.12.2, PR #711).
func TestAppMeshRoutesMatchPort(t *testing.T) {
	r, err := Render(Options{Mesh: MeshAppMesh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vr := appMeshRouter(t, r.Objects)
	var listeners, matched []int64
	for _, l := range vr.Spec.Listeners {
		listeners = append(listeners, l.PortMapping.Port)
	}
	for _, rt := range vr.Spec.Routes {
		var port *int64
		switch {
		case rt.HTTPRoute != nil:
			port = rt.HTTPRoute.Match.Port
		case rt.GRPCRoute != nil:
			port = rt.GRPCRoute.Match.Port
		case rt.TCPRoute != nil:
			port = rt.TCPRoute.Match.Port
		}
		if port == nil {
			t.Errorf("route %s has no match.port on a router of listeners %v", rt.Name, listeners)
			continue
		}
		if !slices.Contains(listeners, *port) {
			t.Errorf("route %s matches port %d, not a listener of the router %v", rt.Name, *port, listeners)
		}
		matched = append(matched, *port)
	}
	for _, l := range listeners {
		if !slices.Contains(matched, l) {
			t.Errorf("listener %d has no route", l)
		}
	}
}

// TestSecurityContextOnContainers checks that loadgen's user is set on its
// own containers, not on the pod, whose securityContext every container
// inherits — App Mesh's injected proxyinit too. Its template in the
// controller (pkg/inject/init_proxy.go) sets only
// `"securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}`: no user,
// so it would run as loadgen's 65532, and its iptables needs root.
// Kubernetes, "Configure a Security Context": "the runAsUser field
// specifies that for any Containers in the Pod, all processes run with
// user ID 1000".
func TestSecurityContextOnContainers(t *testing.T) {
	for _, o := range []Options{{Mesh: MeshAppMesh}, {Mesh: MeshIstio}, {Mesh: MeshLinkerd}, {Mesh: MeshIstioAmbient}} {
		r, err := Render(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range r.Objects {
			var spec *corev1.PodSpec
			switch u.GetKind() {
			case "Deployment", "Job":
				var tpl struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &tpl); err != nil {
					t.Fatal(err)
				}
				spec = &tpl.Spec.Template.Spec
			default:
				continue
			}
			if sc := spec.SecurityContext; sc != nil && (sc.RunAsUser != nil || sc.RunAsNonRoot != nil || sc.RunAsGroup != nil) {
				t.Errorf("%s %s: the pod sets a user (%+v) the mesh's init containers inherit", o.Mesh, ObjectRef(u), sc)
			}
			for _, c := range spec.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != NonRootUser || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
					t.Errorf("%s %s: container %s does not run as non-root user %d: %+v", o.Mesh, ObjectRef(u), c.Name, NonRootUser, sc)
				}
			}
		}
	}
}

// TestAppMeshNoVirtualNodeAnnotation checks that no pod is annotated with its
// VirtualNode: the App Mesh controller (v1, appmesh.k8s.aws/v1beta2) gives a
// pod the VirtualNode whose podSelector selects it; the annotations its
// injector reads are listed in pkg/inject/constants.go (cpuRequest,
// memoryRequest, appmeshCNI, ports, egressIgnoredIPs, egressIgnoredPorts,
// ignoredGID, ignoredUID, proxyEgressPort, proxyIngressPort, preview,
// sidecarInjectorWebhook, secretMounts, virtualGatewaySkipImageOverride):
// appmesh.k8s.aws/virtualNode is the pre-v1 controller's, which nothing
// reads.
func TestAppMeshNoVirtualNodeAnnotation(t *testing.T) {
	r, err := Render(Options{Mesh: MeshAppMesh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range r.Objects {
		raw, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "annotations")
		for k := range raw {
			if k == "appmesh.k8s.aws/virtualNode" {
				t.Errorf("%s carries %s, which the controller does not read", ObjectRef(u), k)
			}
		}
	}
	if !strings.Contains(AppMeshNotice, "appmesh:StreamAggregatedResources") {
		t.Errorf("the App Mesh notice does not say Envoy needs appmesh:StreamAggregatedResources: %s", AppMeshNotice)
	}
}
