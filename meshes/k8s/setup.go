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
}

// Setup is the rendering's part of the run's setup.
func (o Options) Setup() Setup {
	s := Setup{Mesh: o.Mesh, Class: o.Class, Routes: o.Routes, Via: o.ViaOf()}
	if o.sidecars() {
		s.Mode = o.Mode
	}
	if o.Mesh == MeshGateway {
		s.Gateway = o.GatewayObject()
	}
	return s
}
