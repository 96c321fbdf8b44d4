package k8s

import (
	"fmt"
	"strconv"
)

// Istio's and Linkerd's pod annotations.
const (
	annIstioInject     = "sidecar.istio.io/inject"
	annIstioProxyCfg   = "proxy.istio.io/config"
	annIstioProxyCPU   = "sidecar.istio.io/proxyCPU"
	annIstioProxyMem   = "sidecar.istio.io/proxyMemory"
	annIstioNative     = "sidecar.istio.io/nativeSidecar"
	annIstioExcludeIn  = "traffic.sidecar.istio.io/excludeInboundPorts"
	annLinkerdInject   = "linkerd.io/inject"
	annLinkerdNative   = "config.alpha.linkerd.io/proxy-enable-native-sidecar"
	annLinkerdSkipIn   = "config.linkerd.io/skip-inbound-ports"
	annAppMeshInject   = "appmesh.k8s.aws/sidecarInjectorWebhook"
	annAppMeshCPU      = "appmesh.k8s.aws/cpuRequest"
	annAppMeshMem      = "appmesh.k8s.aws/memoryRequest"
	annAppMeshNode     = "appmesh.k8s.aws/virtualNode"
	labelIstioInject   = "istio-injection"
	labelIstioRev      = "istio.io/rev"
	labelDataplaneMode = "istio.io/dataplane-mode"
	labelUseWaypoint   = "istio.io/use-waypoint"
	labelAppMeshMesh   = "mesh"
)

// serverAnnotations are the target pod's, per mesh and mode.
func (o Options) serverAnnotations() map[string]string {
	return o.podAnnotations(o.injectServer(), true)
}

// clientAnnotations are the worker pods'. A worker with a sidecar runs it as
// a native sidecar (an init container that ends with the pod), or the Job
// would never complete.
func (o Options) clientAnnotations() map[string]string {
	return o.podAnnotations(o.injectClient(), false)
}

func (o Options) podAnnotations(inject, server bool) map[string]string {
	direct := strconv.Itoa(PortHTTPDirect)
	switch o.Mesh {
	case MeshIstio:
		if !inject {
			return map[string]string{annIstioInject: "false"}
		}
		cfg := fmt.Sprintf("concurrency: %d", o.Concurrency)
		a := map[string]string{annIstioInject: "true", annIstioProxyCPU: o.ProxyCPU, annIstioProxyMem: o.ProxyMemory}
		if server {
			a[annIstioExcludeIn] = direct
		} else {
			cfg += "\nholdApplicationUntilProxyStarts: true"
			a[annIstioNative] = "true"
		}
		a[annIstioProxyCfg] = cfg
		return a
	case MeshLinkerd:
		if !inject {
			return map[string]string{annLinkerdInject: "disabled"}
		}
		a := map[string]string{annLinkerdInject: "enabled"}
		if server {
			a[annLinkerdSkipIn] = direct
		} else {
			a[annLinkerdNative] = "true"
		}
		return a
	case MeshAppMesh:
		if !inject {
			return map[string]string{annAppMeshInject: "disabled"}
		}
		node := ClientName
		if server {
			node = TargetName
		}
		return map[string]string{annAppMeshInject: "enabled", annAppMeshCPU: o.ProxyCPU, annAppMeshMem: o.ProxyMemory,
			annAppMeshNode: node + "_" + o.Namespace}
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
			l[labelIstioInject] = "enabled"
		}
	case MeshIstioAmbient, MeshIstioWaypoint:
		l[labelDataplaneMode] = "ambient"
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
