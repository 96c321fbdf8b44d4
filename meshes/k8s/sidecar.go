package k8s

import (
	"fmt"
	"strconv"
	"strings"
)

// The meshes' pod and namespace labels and annotations, as each mesh's
// documentation names them.
const (
	labelIstioInject    = "sidecar.istio.io/inject" // a pod label since Istio 1.x deprecated the annotation
	annIstioProxyCfg    = "proxy.istio.io/config"
	annIstioProxyCPU    = "sidecar.istio.io/proxyCPU"
	annIstioProxyMem    = "sidecar.istio.io/proxyMemory"
	annIstioProxyCPULim = "sidecar.istio.io/proxyCPULimit"
	annIstioNative      = "sidecar.istio.io/nativeSidecar"
	annIstioExcludeIn   = "traffic.sidecar.istio.io/excludeInboundPorts"
	annIstioExcludeOut  = "traffic.sidecar.istio.io/excludeOutboundPorts"
	annLinkerdInject    = "linkerd.io/inject"
	annLinkerdNative    = "config.alpha.linkerd.io/proxy-enable-native-sidecar" // deprecated for the beta one, still read
	annLinkerdNativeB   = "config.beta.linkerd.io/proxy-enable-native-sidecar"
	annLinkerdCPUReq    = "config.linkerd.io/proxy-cpu-request"
	annLinkerdCPULim    = "config.linkerd.io/proxy-cpu-limit" // also the proxy's worker threads
	annLinkerdMemReq    = "config.linkerd.io/proxy-memory-request"
	annLinkerdOpaque    = "config.linkerd.io/opaque-ports"
	annLinkerdSkipIn    = "config.linkerd.io/skip-inbound-ports"
	annLinkerdSkipOut   = "config.linkerd.io/skip-outbound-ports"
	annAppMeshInject    = "appmesh.k8s.aws/sidecarInjectorWebhook"
	annAppMeshCPU       = "appmesh.k8s.aws/cpuRequest"
	annAppMeshMem       = "appmesh.k8s.aws/memoryRequest"
	annAppMeshCPULim    = "appmesh.k8s.aws/cpuLimit"
	annAppMeshPorts     = "appmesh.k8s.aws/ports"              // the inbound ports the proxy captures
	annAppMeshEgressIgn = "appmesh.k8s.aws/egressIgnoredPorts" // replaces the controller's default, 22
	labelIstioNSInject  = "istio-injection"
	labelIstioRev       = "istio.io/rev"
	labelUseWaypoint    = "istio.io/use-waypoint"
	labelAppMeshMesh    = "mesh"
)

// The ambient mesh's marks, which a run checks on the target's pods too.
const (
	// LabelDataplaneMode enrols a namespace in the ambient mesh (ambient)
	// or leaves a pod out of it (none).
	LabelDataplaneMode = "istio.io/dataplane-mode"
	// AnnAmbientRedirection is what istio-cni sets "enabled" on a pod it
	// enrolled.
	AnnAmbientRedirection = "ambient.istio.io/redirection"
)

// directPorts are the direct ports as the meshes' annotations list them.
var directPorts = func() string {
	var s []string
	for _, p := range DirectPorts {
		s = append(s, strconv.Itoa(p))
	}
	return strings.Join(s, ",")
}()

// appMeshEgressIgnored keeps the App Mesh controller's default (22) and
// adds the direct ports.
var appMeshEgressIgnored = "22," + directPorts

// appMeshAppPorts are the target's mesh ports (its VirtualNode's
// listeners): the direct port is not among them.
var appMeshAppPorts = fmt.Sprintf("%d,%d,%d", PortHTTP, PortGRPC, PortTCP)

// A pod's mesh decoration: which side it is and whether it carries the
// direct path's load or serves it outside the mesh.
type podSide struct {
	server bool
	direct bool // ambient: the direct path's pods, outside the mesh
}

// serverPod and clientPod are the target's and the workers' pod labels
// and annotations, per mesh and mode.
func (o Options) serverPod() (labels, annotations map[string]string) {
	return o.podMeta(podSide{server: true})
}

// clientPod returns a worker pod's labels and annotations. A worker with a
// sidecar runs it as a native sidecar (an init container that ends with the
// pod), or the Job would never complete. A worker of the direct path in an
// ambient mesh is left out of it.
func (o Options) clientPod(direct bool) (labels, annotations map[string]string) {
	return o.podMeta(podSide{direct: direct})
}

// podMeta returns a pod's labels and annotations: the mesh path crosses the
// proxies the mode places; the direct ports (8081, 9091, 9001) are left out
// of every capture, inbound on the server and outbound on the client, so the
// baseline crosses none (a client sidecar that captured it would, with
// Istio's auto-mTLS, send mTLS to a port no proxy terminates). Ambient meshes
// capture every port of an enrolled pod: their direct path runs between pods
// labelled out of the mesh.
func (o Options) podMeta(side podSide) (labels, annotations map[string]string) {
	direct := directPorts
	inject := o.InjectClient()
	if side.server {
		inject = o.InjectServer()
	}
	switch o.Mesh {
	case MeshIstio:
		if !inject {
			return map[string]string{labelIstioInject: "false"}, nil
		}
		cfg := fmt.Sprintf("concurrency: %d", o.Concurrency)
		a := map[string]string{annIstioProxyCPU: o.ProxyCPU, annIstioProxyMem: o.ProxyMemory, annIstioProxyCPULim: o.proxyCPULimit()}
		if side.server {
			a[annIstioExcludeIn] = direct
			if o.Hops > 1 { // a hop's calls on the direct ports: the baseline's chain
				a[annIstioExcludeOut] = direct
			}
		} else {
			a[annIstioExcludeOut] = direct
			cfg += "\nholdApplicationUntilProxyStarts: true"
			a[annIstioNative] = "true"
		}
		a[annIstioProxyCfg] = cfg
		return map[string]string{labelIstioInject: "true"}, a
	case MeshIstioAmbient, MeshIstioWaypoint:
		if side.direct {
			return map[string]string{LabelDataplaneMode: "none"}, nil
		}
		return nil, nil
	case MeshLinkerd:
		if !inject {
			return nil, map[string]string{annLinkerdInject: "disabled"}
		}
		// The proxy's CPU limit is its worker threads too: without it
		// Linkerd runs a single one.
		a := map[string]string{annLinkerdInject: "enabled", annLinkerdCPUReq: o.ProxyCPU, annLinkerdCPULim: o.proxyCPULimit(),
			annLinkerdMemReq: o.ProxyMemory}
		if side.server {
			a[annLinkerdSkipIn] = direct
			a[annLinkerdOpaque] = linkerdOpaquePorts
			if o.Hops > 1 { // a hop's calls on the direct ports: the baseline's chain
				a[annLinkerdSkipOut] = direct
			}
		} else {
			a[annLinkerdSkipOut] = direct
			a[annLinkerdNative] = "true"
			a[annLinkerdNativeB] = "true"
		}
		return nil, a
	case MeshAppMesh:
		if !inject {
			return nil, map[string]string{annAppMeshInject: "disabled"}
		}
		a := map[string]string{annAppMeshInject: "enabled", annAppMeshCPU: o.ProxyCPU, annAppMeshMem: o.ProxyMemory,
			annAppMeshCPULim: o.proxyCPULimit()}
		// The controller picks a pod's VirtualNode by the nodes' podSelector.
		if side.server {
			a[annAppMeshPorts] = appMeshAppPorts
		} else {
			a[annAppMeshEgressIgn] = appMeshEgressIgnored
		}
		return nil, a
	}
	return nil, nil
}

// linkerdOpaquePorts is the TCP echo's port: raw TCP, which Linkerd would
// otherwise hold for protocol detection on every connection.
var linkerdOpaquePorts = strconv.Itoa(PortTCP)

// proxyCPULimit is every sidecar's CPU limit: as many cores as it runs
// worker threads (Concurrency), which Linkerd derives from its limit.
func (o Options) proxyCPULimit() string { return strconv.Itoa(o.Concurrency) }

// ServiceAnnotations are the mesh's annotations of the target's Service:
// Linkerd's opaque ports, which "any Service which targets that port must
// also use" (linkerd check).
func (o Options) ServiceAnnotations() map[string]string {
	if o.Mesh == MeshLinkerd {
		return map[string]string{annLinkerdOpaque: linkerdOpaquePorts}
	}
	return nil
}

// decorateNamespace adds the mesh's namespace labels and annotations.
func (o Options) decorateNamespace(l, a map[string]string) {
	switch o.Mesh {
	case MeshIstio:
		if o.Revision != "" {
			l[labelIstioRev] = o.Revision
		} else {
			l[labelIstioNSInject] = "enabled"
		}
	case MeshIstioAmbient, MeshIstioWaypoint:
		l[LabelDataplaneMode] = "ambient"
		if o.Mesh == MeshIstioWaypoint {
			l[labelUseWaypoint] = WaypointName
		}
	case MeshLinkerd:
		a[annLinkerdInject] = "enabled"
	case MeshAppMesh:
		l[labelAppMeshMesh] = AppMeshName
		l[annAppMeshInject] = "enabled"
	}
}

// SidecarContainer is the proxy container a sidecar mesh injects.
func SidecarContainer(mesh string) string {
	switch mesh {
	case MeshIstio:
		return "istio-proxy"
	case MeshLinkerd:
		return "linkerd-proxy"
	case MeshAppMesh:
		return "envoy"
	case MeshSidecar:
		return ContainerSidecar
	}
	return ""
}

// InjectorHint says what injects a mesh's sidecar into the namespace.
func (o Options) InjectorHint() string {
	switch o.Mesh {
	case MeshIstio:
		if o.Revision != "" {
			return fmt.Sprintf("is Istio revision %s installed, its injector watching namespaces labelled %s=%s?", o.Revision, labelIstioRev, o.Revision)
		}
		return fmt.Sprintf("is Istio installed, its injector watching namespaces labelled %s=enabled?", labelIstioNSInject)
	case MeshLinkerd:
		return "is Linkerd installed (linkerd check), its proxy injector running?"
	case MeshAppMesh:
		return "is the App Mesh controller installed, its sidecar injector running?"
	case MeshSidecar:
		return "loadgen renders it itself: did an admission policy remove it?"
	}
	return ""
}
