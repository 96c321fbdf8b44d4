package k8s

// Setup is what a run rendered and reached, for its results (k8s run
// writes it beside the steps, mesh.json): the mesh, how the workers
// reached an ingress or a gateway and at which address.
type Setup struct {
	Mesh    string   `json:"mesh"`
	Mode    string   `json:"mode,omitempty"`
	Class   string   `json:"class,omitempty"`
	Gateway string   `json:"gateway,omitempty"`
	Routes  []string `json:"routes,omitempty"`
	// Via is how the workers reached the ingress or the gateway:
	// ViaService or ViaPublished.
	Via     string     `json:"via,omitempty"`
	Address *Addresses `json:"address,omitempty"`
	// Proxies are the path's proxies and what each was given.
	Proxies []ProxySetup `json:"proxies,omitempty"`
}

// Setup is the rendering's part of the run's setup.
func (o Options) Setup() Setup {
	s := Setup{Mesh: o.Mesh, Class: o.Class, Routes: o.Routes, Via: o.ViaOf(), Proxies: o.ProxySetups()}
	if o.sidecars() {
		s.Mode = o.Mode
	}
	if o.Mesh == MeshGateway {
		s.Gateway = o.GatewayObject()
	}
	return s
}

// ProxySetup is what a proxy of the path was given: its worker threads
// and CPU, as the rendering asked them of the mesh, or, for the proxies
// a mesh's install runs (ztunnel, a waypoint, an ingress controller, a
// gateway), what loadgen leaves to that install.
type ProxySetup struct {
	Name          string `json:"name"` // the proxy's container or component: istio-proxy, linkerd-proxy, envoy, ztunnel…
	Side          string `json:"side"` // client, server (sidecars), node (ztunnel) or shared (waypoint, ingress, gateway)
	Threads       int    `json:"threads,omitempty"`
	CPURequest    string `json:"cpu_request,omitempty"`
	CPULimit      string `json:"cpu_limit,omitempty"`
	MemoryRequest string `json:"memory_request,omitempty"`
	// Set names how the mesh was told (its annotations); Note what loadgen
	// does not set, and what runs then.
	Set  []string `json:"set,omitempty"`
	Note string   `json:"note,omitempty"`
}

// ProxySetups are the path's proxies and what each was given. Every
// sidecar gets the same terms: Concurrency worker threads, ProxyCPU
// requested, as many cores of CPU limit as threads (Linkerd derives its
// threads from that limit), ProxyMemory requested.
func (o Options) ProxySetups() []ProxySetup {
	var out []ProxySetup
	sidecar := func(side string) ProxySetup {
		p := ProxySetup{Name: SidecarContainer(o.Mesh), Side: side, Threads: o.Concurrency, CPURequest: o.ProxyCPU,
			CPULimit: o.proxyCPULimit(), MemoryRequest: o.ProxyMemory}
		switch o.Mesh {
		case MeshIstio:
			p.Set = []string{annIstioProxyCfg + " concurrency", annIstioProxyCPU, annIstioProxyCPULim, annIstioProxyMem}
		case MeshLinkerd:
			p.Set = []string{annLinkerdCPULim + " (its worker threads too)", annLinkerdCPUReq, annLinkerdMemReq}
		case MeshAppMesh:
			p.Threads = 0
			p.Set = []string{annAppMeshCPU, annAppMeshCPULim, annAppMeshMem}
			p.Note = "App Mesh's injector sets no --concurrency (ENVOY_CONCURRENCY is not settable per pod): Envoy runs " +
				"a worker per hardware thread of the node"
		}
		return p
	}
	switch o.Mesh {
	case MeshIstio, MeshLinkerd, MeshAppMesh:
		if o.InjectClient() {
			out = append(out, sidecar("client"))
		}
		if o.InjectServer() {
			out = append(out, sidecar("server"))
		}
	case MeshIstioAmbient, MeshIstioWaypoint:
		out = append(out, ProxySetup{Name: "ztunnel", Side: "node", Note: "the ztunnel DaemonSet's, as Istio was installed"})
		if o.Mesh == MeshIstioWaypoint {
			out = append(out, ProxySetup{Name: "waypoint", Side: "shared", Note: "the waypoint Deployment's, as Istio's gateway template makes it"})
		}
	case MeshIngressNginx:
		p := ProxySetup{Name: "ingress-nginx", Side: "shared", Note: "the controller's; its worker-processes are read at each step"}
		if o.ConfigureController {
			p.Threads, p.Set, p.Note = o.Workers, []string{"ConfigMap " + o.IngressNamespace + "/" + IngressControllerConfigMap + " worker-processes"}, ""
		}
		out = append(out, p)
	case MeshIngress, MeshGateway:
		name := "ingress"
		if o.Mesh == MeshGateway {
			name = "gateway"
		}
		out = append(out, ProxySetup{Name: name, Side: "shared", Note: "class " + o.Class + "'s proxy, as it was installed"})
	}
	return out
}
