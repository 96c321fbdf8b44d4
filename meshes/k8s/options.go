// Package k8s renders, from typed Go values, the Kubernetes objects of a
// mesh comparison — the httpbin/gRPC/TCP target, its Service, the client
// Job and each mesh's or gateway's own objects — and the `loadgen run`
// arguments of a sweep's steps, with no cluster. The packages below it
// use what it renders: cluster (connect, apply, clean up), cost (the
// proxies' CPU and memory), worker (one worker of a Job, and the
// collection of their reports), run (a sweep as Indexed Jobs whose
// workers' histograms merge exactly) and paths (`loadgen k8s paths`).
package k8s

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The meshes and gateways loadgen renders.
const (
	MeshNone          = "none"
	MeshIstio         = "istio"
	MeshIstioAmbient  = "istio-ambient"
	MeshIstioWaypoint = "istio-waypoint"
	MeshLinkerd       = "linkerd"
	MeshAppMesh       = "appmesh"
	MeshIngressNginx  = "ingress-nginx"
	MeshIngress       = "ingress"
	MeshGateway       = "gateway"
)

// Meshes lists every valid --mesh, in the order --help shows them.
var Meshes = []string{MeshNone, MeshIstio, MeshIstioAmbient, MeshIstioWaypoint, MeshLinkerd, MeshAppMesh, MeshIngressNginx, MeshIngress, MeshGateway, MeshSidecar}

// Sidecar placements (istio/tools' names): which pods get a proxy.
const (
	ModeBoth       = "both"
	ModeServerOnly = "serveronly"
	ModeClientOnly = "clientonly"
)

// Modes lists the sidecar placements.
var Modes = []string{ModeBoth, ModeServerOnly, ModeClientOnly, ModeNone}

// Options say what to render.
type Options struct {
	Namespace string // default "loadgen"
	Mesh      string // one of Meshes
	Mode      string // sidecar meshes: one of Modes (default both)
	RunID     string // the value of LabelRun on every object (default "render")
	Image     string // the loadgen image (default DefaultImage)

	// Istio.
	Revision    string // istio.io/rev=REV instead of istio-injection=enabled
	Concurrency int    // proxy.istio.io/config concurrency (default 2)
	ProxyCPU    string // sidecar.istio.io/proxyCPU and the App Mesh cpuRequest (default 1)
	ProxyMemory string // sidecar.istio.io/proxyMemory and the App Mesh memoryRequest (default 512Mi)
	MTLS        bool   // a STRICT PeerAuthentication for the namespace

	// Class is the IngressClass (ingress-nginx: default nginx; ingress:
	// required, e.g. traefik) or the GatewayClass (gateway, required).
	Class string
	// IngressNamespace is where the ingress-nginx controller runs (default
	// ingress-nginx); its ConfigMap is rendered there.
	IngressNamespace string
	// ConfigureController lets a run change the ingress-nginx
	// controller's ConfigMap (shared by every Ingress of the cluster):
	// server-side applied as loadgen, its previous values recorded and put
	// back at the end. Without it nothing outside the run's namespace is
	// rendered or changed.
	ConfigureController bool
	// Workers is the worker-processes ConfigureController sets (default
	// 2): explicit, because "auto" counts the node's cores, not the pod's
	// limit.
	Workers int
	// TLSCert and TLSKey (PEM) are the Ingress's TLS secret; empty: a new
	// self-signed certificate.
	TLSCert, TLSKey []byte

	// Sidecar is --mesh sidecar's proxy (sidecarmesh.go).
	Sidecar SidecarOptions

	// SameNodeOK lets the scheduler put clients beside the target when no
	// other node fits (preferred instead of required anti-affinity).
	SameNodeOK bool
}

// Defaults.
const (
	DefaultNamespace   = "loadgen"
	DefaultImage       = "loadgen:latest"
	DefaultConcurrency = 2
	DefaultProxyCPU    = "1"
	DefaultProxyMemory = "512Mi"
	DefaultIngressNS   = "ingress-nginx"
	DefaultIngressCls  = "nginx"
	DefaultWorkers     = 2
	DefaultRunID       = "render"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate checks the options as Render would, before anything else runs.
func (o Options) Validate() error {
	_, err := o.WithDefaults()
	return err
}

// WithDefaults fills what was left empty and checks the rest.
func (o Options) WithDefaults() (Options, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.RunID == "" {
		o.RunID = DefaultRunID
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.Mesh == "" {
		o.Mesh = MeshNone
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.ProxyCPU == "" {
		o.ProxyCPU = DefaultProxyCPU
	}
	if o.ProxyMemory == "" {
		o.ProxyMemory = DefaultProxyMemory
	}
	if o.IngressNamespace == "" {
		o.IngressNamespace = DefaultIngressNS
	}
	if o.Workers == 0 && o.ConfigureController {
		o.Workers = DefaultWorkers
	}
	if o.Mode == "" {
		o.Mode = ModeBoth
	}
	if o.Mesh == MeshIngressNginx && o.Class == "" {
		o.Class = DefaultIngressCls
	}
	if err := o.sidecarMeshDefaults(); err != nil {
		return o, err
	}
	return o, o.validate()
}

func (o Options) validate() error {
	if !slices.Contains(Meshes, o.Mesh) {
		return fmt.Errorf("unknown mesh %q: want one of %s", o.Mesh, strings.Join(Meshes, ", "))
	}
	if !slices.Contains(Modes, o.Mode) {
		return fmt.Errorf("unknown mode %q: want one of %s", o.Mode, strings.Join(Modes, ", "))
	}
	if o.Mode != ModeBoth && !o.sidecars() {
		return fmt.Errorf("mode %s places sidecars: it applies to istio, linkerd and appmesh, not %s", o.Mode, o.Mesh)
	}
	for _, v := range []struct{ what, s string }{{"namespace", o.Namespace}, {"run id", o.RunID}, {"ingress namespace", o.IngressNamespace}} {
		if len(v.s) > 63 || !dnsLabel.MatchString(v.s) {
			return fmt.Errorf("%s %q: want a DNS label (lower-case letters, digits and '-', at most 63)", v.what, v.s)
		}
	}
	if o.Mesh == MeshGateway && o.Class == "" {
		return fmt.Errorf("mesh gateway needs --class: the GatewayClass of your implementation (e.g. nginx, eg, istio, cilium, amazon-vpc-lattice)")
	}
	if o.Mesh == MeshIngress && o.Class == "" {
		return fmt.Errorf("mesh ingress needs --class: the IngressClass of your controller (e.g. traefik, haproxy, contour; ingress-nginx has --mesh ingress-nginx)")
	}
	if o.Class != "" && o.Mesh != MeshGateway && !o.UsesIngress() {
		return fmt.Errorf("--class applies to --mesh gateway, ingress and ingress-nginx, not %s", o.Mesh)
	}
	if o.Revision != "" && !o.istio() {
		return fmt.Errorf("--revision applies to the istio meshes, not %s", o.Mesh)
	}
	if o.MTLS && !o.istio() && o.Mesh != MeshSidecar {
		return fmt.Errorf("--mtls (a STRICT PeerAuthentication) applies to the istio meshes, not %s", o.Mesh)
	}
	if o.ConfigureController && o.Mesh != MeshIngressNginx {
		return fmt.Errorf("--configure-controller applies to --mesh ingress-nginx, not %s", o.Mesh)
	}
	if o.Workers != 0 && !o.ConfigureController {
		return fmt.Errorf("--worker-processes changes the ingress controller's ConfigMap, which every Ingress of the cluster shares: " +
			"add --configure-controller (k8s run puts the previous values back at the end)")
	}
	if o.Concurrency < 0 || o.Workers < 0 {
		return fmt.Errorf("concurrency and workers must be positive")
	}
	if (len(o.TLSCert) == 0) != (len(o.TLSKey) == 0) {
		return fmt.Errorf("the TLS certificate and key go together")
	}
	return nil
}

// sidecars tells whether the mesh injects a proxy into pods.
func (o Options) sidecars() bool {
	return o.Mesh == MeshIstio || o.Mesh == MeshLinkerd || o.Mesh == MeshAppMesh || o.Mesh == MeshSidecar
}

// UsesIngress tells whether the mesh path crosses an Ingress's controller.
func (o Options) UsesIngress() bool { return o.Mesh == MeshIngressNginx || o.Mesh == MeshIngress }

// Published tells whether the mesh path's address is what the cluster
// publishes: an Ingress's or a Gateway's.
func (o Options) Published() bool { return o.UsesIngress() || o.Mesh == MeshGateway }

func (o Options) istio() bool {
	return o.Mesh == MeshIstio || o.Mesh == MeshIstioAmbient || o.Mesh == MeshIstioWaypoint
}

// InjectServer tells whether the target gets a sidecar.
func (o Options) InjectServer() bool {
	return o.sidecars() && o.Mode != ModeClientOnly && o.Mode != ModeNone
}

// InjectClient tells whether the workers get a sidecar.
func (o Options) InjectClient() bool {
	return o.sidecars() && o.Mode != ModeServerOnly && o.Mode != ModeNone
}
