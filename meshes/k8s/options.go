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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	Revision string // istio.io/rev=REV instead of istio-injection=enabled
	MTLS     bool   // a STRICT PeerAuthentication for the namespace

	// Every sidecar proxy, on equal terms (ProxySetups says how each mesh
	// takes them). The node and gateway proxies are their install's.
	Concurrency int    // worker threads, and the CPU limit in cores (default 2)
	ProxyCPU    string // CPU request (default 1)
	ProxyMemory string // memory request (default 512Mi)

	// Class is the IngressClass (ingress-nginx: default nginx; ingress:
	// required, e.g. traefik) or the GatewayClass (gateway, required).
	Class string
	// Gateway is the Gateway's name (gateway; default GatewayName): VPC
	// Lattice maps it to the service network of that name.
	Gateway string
	// Routes are the kinds of route the ingress or the gateway carries to
	// the target: RouteHTTP, RouteGRPC, RouteTCP (default http; k8s run
	// takes its sweep's, RoutesOf). A kind the class cannot carry is
	// refused.
	Routes []string
	// Via is how the workers reach an ingress or a gateway: ViaService
	// (the default: the controller's Service inside the cluster) or
	// ViaPublished (the address the Ingress or the Gateway publishes, a
	// cloud load balancer's). VPC Lattice has no Service: published.
	Via string
	// IngressService ("NAMESPACE/NAME") is the ingress controller's or
	// the gateway's Service the workers load with --via service, named by
	// the user; empty: found from what the controller says of itself.
	IngressService string
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

	// Hops is how many targets a request crosses (isotope-style chain):
	// loadgen-target, which the paths load, calls loadgen-target-2 on its
	// mesh port, and so on, so a mesh path crosses Hops proxy pairs (the
	// direct path, on the direct ports, none). 0 or 1: one target.
	Hops int

	// SameNodeOK lets the scheduler put clients beside the target when no
	// other node fits (preferred instead of required anti-affinity).
	SameNodeOK bool

	// ControlPlane is --control-plane: the control planes whose cost a
	// run records (ParseControlPlane), or "none"; empty: the mesh's own
	// (DefaultControlPlanes).
	ControlPlane []string

	// Metrics is where a run reads its cost (k8s run's --prometheus and
	// --no-metrics): MetricsAPI (the default), MetricsPrometheus or
	// MetricsNone. NoNodeCost (--no-node-cost) leaves out the nodes' own
	// figures. The permissions a run needs follow both (rbac.go).
	Metrics    string
	NoNodeCost bool

	// WorkerCPU and WorkerMemory are each worker container's resource
	// requests (default 100m, 64Mi): a worker is never BestEffort, the
	// first pod a node under pressure evicts or starves.
	WorkerCPU, WorkerMemory string

	// Runner placement (placement.go). WorkerRequests and WorkerLimits
	// are the worker container's requests (beside WorkerCPU and
	// WorkerMemory, which they may replace) and limits.
	WorkerRequests, WorkerLimits corev1.ResourceList
	// WorkerNodeSelector and WorkerTolerations are the worker pods'.
	WorkerNodeSelector map[string]string
	WorkerTolerations  []corev1.Toleration
	// TargetNode is the node the target pods run on; empty: the
	// scheduler's choice.
	TargetNode string
}

// Where a run reads its cost (Options.Metrics).
const (
	MetricsAPI        = "metrics.k8s.io" // metrics-server
	MetricsPrometheus = "prometheus"     // cAdvisor's series in a Prometheus
	MetricsNone       = "none"           // no cost recorded
)

// MetricsSource is where a run reads its cost from its flags: none with
// --no-metrics (which wins), a Prometheus with --prometheus URL, else
// metrics.k8s.io. The permissions a run needs follow it (rbac.go), and
// the run's watcher (meshes/k8s/cost.NewWatcher).
func MetricsSource(prometheus string, noMetrics bool) string {
	switch {
	case noMetrics:
		return MetricsNone
	case prometheus != "":
		return MetricsPrometheus
	}
	return MetricsAPI
}

// MaxHops bounds Options.Hops.
const MaxHops = 16

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
	DefaultWorkerCPU   = "100m"
	DefaultWorkerMem   = "64Mi"
)

// DefaultPathsNamespace is k8s paths' namespace (paths.DefaultNamespace),
// here for the roles of k8s rbac --for paths (RBAC).
const DefaultPathsNamespace = "loadgen-paths"

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
	if o.sidecars() {
		if o.Concurrency == 0 {
			o.Concurrency = DefaultConcurrency
		}
		if o.ProxyCPU == "" && o.Mesh != MeshSidecar {
			o.ProxyCPU = DefaultProxyCPU
		}
		if o.ProxyMemory == "" && o.Mesh != MeshSidecar {
			o.ProxyMemory = DefaultProxyMemory
		}
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
	if o.Metrics == "" {
		o.Metrics = MetricsAPI
	}
	if o.Mesh == MeshIngressNginx && o.Class == "" {
		o.Class = DefaultIngressCls
	}
	if o.Mesh == MeshGateway && o.Gateway == "" {
		o.Gateway = GatewayName
	}
	if o.Published() && len(o.Routes) == 0 {
		o.Routes = []string{RouteHTTP}
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
	if o.Gateway != "" && o.Mesh != MeshGateway {
		return fmt.Errorf("--gateway-name applies to --mesh gateway, not %s", o.Mesh)
	}
	if o.Gateway != "" && (len(o.Gateway) > 63 || !dnsLabel.MatchString(o.Gateway)) {
		return fmt.Errorf("gateway name %q: want a DNS label (lower-case letters, digits and '-', at most 63)", o.Gateway)
	}
	if o.Via != "" && o.Via != ViaService && o.Via != ViaPublished {
		return fmt.Errorf("--via %q: want %s or %s", o.Via, ViaService, ViaPublished)
	}
	if o.Via != "" && !o.Published() {
		return fmt.Errorf("--via applies to --mesh gateway, ingress and ingress-nginx, not %s", o.Mesh)
	}
	if o.Via == ViaService && o.Mesh == MeshGateway && o.Class == ClassLattice {
		return fmt.Errorf("--via service with --class %s: VPC Lattice serves a route at the domain it assigns, outside the cluster, "+
			"with no Service in it; its address is the published one (--via published, the default for this class)", o.Class)
	}
	if err := o.validateIngressService(); err != nil {
		return err
	}
	if len(o.Routes) > 0 && !o.Published() {
		return fmt.Errorf("--routes applies to --mesh gateway, ingress and ingress-nginx, not %s", o.Mesh)
	}
	for _, r := range o.Routes {
		if err := o.carries(r); err != nil {
			return err
		}
	}
	if o.Revision != "" && !o.istio() {
		return fmt.Errorf("--revision applies to the istio meshes, not %s", o.Mesh)
	}
	if o.MTLS && !o.istio() && o.Mesh != MeshSidecar {
		return fmt.Errorf("--mtls (a STRICT PeerAuthentication) applies to the istio meshes, not %s", o.Mesh)
	}
	if o.MTLS && o.Mesh == MeshIstio && o.Mode == ModeServerOnly {
		return fmt.Errorf("--mtls with --mode serveronly: the STRICT PeerAuthentication makes the target's sidecar refuse the workers' plaintext " +
			"(they have no sidecar to speak mTLS), so every mesh request would fail; use --mode both")
	}
	if o.ConfigureController && o.Mesh != MeshIngressNginx {
		return fmt.Errorf("--configure-controller applies to --mesh ingress-nginx, not %s", o.Mesh)
	}
	if o.Workers != 0 && !o.ConfigureController {
		return fmt.Errorf("--worker-processes changes the ingress controller's ConfigMap, which every Ingress of the cluster shares: " +
			"add --configure-controller (k8s run puts the previous values back at the end)")
	}
	if (o.Concurrency != 0 || o.ProxyCPU != "" || o.ProxyMemory != "") && !o.sidecars() {
		return fmt.Errorf("--concurrency, --proxy-cpu and --proxy-memory apply to the sidecars loadgen has injected (istio, linkerd, appmesh), "+
			"not %s: its proxies are its install's", o.Mesh)
	}
	if o.Mesh == MeshSidecar && (o.ProxyCPU != "" || o.ProxyMemory != "") {
		return fmt.Errorf("--proxy-cpu and --proxy-memory do not apply to --mesh sidecar yet: its proxies run without requests or limits (--concurrency sets their threads)")
	}
	if !slices.Contains([]string{MetricsAPI, MetricsPrometheus, MetricsNone}, o.Metrics) {
		return fmt.Errorf("metrics source %q: want %s, %s or %s", o.Metrics, MetricsAPI, MetricsPrometheus, MetricsNone)
	}
	if _, err := o.ControlPlanes(); err != nil {
		return err
	}
	if o.Concurrency < 0 || o.Workers < 0 {
		return fmt.Errorf("concurrency and workers must be positive")
	}
	for _, q := range []struct{ flag, v string }{{"--proxy-cpu", o.ProxyCPU}, {"--proxy-memory", o.ProxyMemory}} {
		if q.v == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q.v); err != nil {
			return fmt.Errorf("%s %q: want a Kubernetes quantity (1, 500m, 512Mi)", q.flag, q.v)
		}
	}
	if err := o.validateHops(); err != nil {
		return err
	}
	if (len(o.TLSCert) == 0) != (len(o.TLSKey) == 0) {
		return fmt.Errorf("the TLS certificate and key go together")
	}
	for _, q := range []struct{ flag, v string }{{"--worker-cpu", o.WorkerCPU}, {"--worker-memory", o.WorkerMemory}} {
		if q.v == "" {
			continue
		}
		if v, err := resource.ParseQuantity(q.v); err != nil || v.Sign() <= 0 {
			return fmt.Errorf("%s %q: want a positive Kubernetes quantity (e.g. 100m, 0.5, 64Mi)", q.flag, q.v)
		}
	}
	return o.validatePlacement()
}

// How the workers reach an ingress or a gateway (Options.Via).
const (
	ViaService   = "service"
	ViaPublished = "published"
)

// ViaOf is how the workers reach the ingress or the gateway: Via, or by
// default the controller's Service (VPC Lattice: its published domain);
// "" for a mesh without one.
func (o Options) ViaOf() string {
	switch {
	case !o.Published():
		return ""
	case o.Via != "":
		return o.Via
	case o.Mesh == MeshGateway && o.Class == ClassLattice:
		return ViaPublished
	}
	return ViaService
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

// ChainHops settles the chain's length: the flag's (flagGiven, already
// in o.Hops) over a sweep file's fileHops, checked. It returns the hops a
// run's manifest records for the report's per-hop figures, 0 for no chain.
func (o *Options) ChainHops(fileHops int, flagGiven bool) (int, error) {
	if fileHops > 1 && !flagGiven {
		o.Hops = fileHops
		if err := o.Validate(); err != nil {
			return 0, err
		}
	}
	if o.Hops > 1 {
		return o.Hops, nil
	}
	return 0, nil
}

// validateHops refuses a chain (--hops) the rendering cannot make.
func (o Options) validateHops() error {
	switch {
	case o.Hops < 0 || o.Hops > MaxHops:
		return fmt.Errorf("--hops %d: want 1 up to %d targets", o.Hops, MaxHops)
	case o.Hops <= 1:
		return nil
	case o.Mesh == MeshAppMesh:
		return fmt.Errorf("--hops with --mesh appmesh is not rendered: a chain needs a VirtualNode, router and service per hop, each with the next as its backend")
	case o.DirectTarget():
		return fmt.Errorf("--hops with --mesh %s is not rendered: the direct path's target is out of the mesh, and a chain would need a copy of each hop out of it", o.Mesh)
	case o.Mesh == MeshSidecar && o.MTLS:
		return fmt.Errorf("--hops with --mesh sidecar --mtls is not rendered: a hop's sidecar would need the server's identity inbound and the client's outbound")
	}
	return nil
}

// validateIngressService checks --ingress-service: a Service's
// NAMESPACE/NAME, for an ingress or a gateway reached through its
// Service (--via service).
func (o Options) validateIngressService() error {
	if o.IngressService == "" {
		return nil
	}
	ns, name, ok := strings.Cut(o.IngressService, "/")
	switch {
	case !o.Published():
		return fmt.Errorf("--ingress-service applies to --mesh gateway, ingress and ingress-nginx, not %s", o.Mesh)
	case o.ViaOf() != ViaService:
		return fmt.Errorf("--ingress-service names the Service --via service loads, not --via %s", o.ViaOf())
	case !ok || !dnsLabel.MatchString(ns) || len(ns) > 63 || !dnsLabel.MatchString(name) || len(name) > 63:
		return fmt.Errorf("--ingress-service %q: want NAMESPACE/NAME of the controller's Service (e.g. traefik/traefik)", o.IngressService)
	}
	return nil
}
