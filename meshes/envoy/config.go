// Package envoy is the Envoy sidecar profile: the bootstrap is built from
// go-control-plane's typed protos, in the layout of Istio's sidecar
// (listeners virtualOutbound on 15001 and virtualInbound on 15006, admin
// on 127.0.0.1:15000, Prometheus stats on 15090, --concurrency 2) or of
// App Mesh's (ingress on 15000, egress on 15001, admin on 9901). Every
// bootstrap is checked by the generated ValidateAll of the bootstrap and of
// every message packed in a typed_config, and rendered as YAML or JSON
// through protojson. Start runs a real envoy when one is on PATH, after
// `envoy --mode validate`; no Envoy package exists in the registries this
// machine reaches, so that needs a binary brought by hand.
package envoy

import (
	"fmt"
	"net/netip"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// Layout is whose sidecar the bootstrap copies.
type Layout string

const (
	Istio   Layout = "istio"
	AppMesh Layout = "appmesh"
)

// Layouts lists the layouts, for help texts.
var Layouts = []Layout{Istio, AppMesh}

// ParseLayout accepts "istio" or "appmesh".
func ParseLayout(s string) (Layout, error) {
	for _, l := range Layouts {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("envoy: unknown layout %q: use istio or appmesh", s)
}

// Ports of the App Mesh layout (Istio's are in package layout).
const (
	AppMeshIngressPort = 15000
	AppMeshEgressPort  = 15001
	AppMeshAdminPort   = 9901
)

// Config is one Envoy sidecar.
type Config struct {
	Layout Layout
	// Sidecar is the listeners. Inbound is virtualInbound (Istio) or the
	// ingress listener (App Mesh), Outbound virtualOutbound or egress;
	// Pod fills in each layout's ports.
	Sidecar layout.Sidecar
	// Stats is Istio's Prometheus listener (0.0.0.0:15090), which serves
	// the admin's /stats/prometheus; App Mesh has none (scrape the admin).
	Stats netip.AddrPort
	// Node names the proxy to Envoy (node.id and node.cluster), as Istio
	// does: "sidecar~IP~POD.NS~NS.svc.cluster.local" and "APP.NS".
	NodeID, NodeCluster string

	// NetNS is the network namespace envoy runs in; empty: this process's.
	NetNS string
	// User runs envoy as that user (layout.ProxyUID in a pod); nil: as
	// this process.
	User *proxyproc.User
	// Dir is the run directory (bootstrap, log); empty means a new
	// temporary directory, removed by Close.
	Dir string
	// Binary is the envoy executable; empty: envoy on PATH.
	Binary string
}

// Pod is the Config of the sidecar s (see layout.Pod) of the pod whose IP
// is podIP, in the given layout: App Mesh's ports replace Istio's, and
// the node is named as each mesh names it.
func Pod(l Layout, podIP netip.Addr, s layout.Sidecar) Config {
	c := Config{Layout: l, Sidecar: s,
		NodeID:      "sidecar~" + podIP.String() + "~loadgen.default~default.svc.cluster.local",
		NodeCluster: "loadgen.default",
	}
	switch l {
	case AppMesh:
		any4 := netip.IPv4Unspecified()
		c.Sidecar.Inbound = netip.AddrPortFrom(any4, AppMeshIngressPort)
		c.Sidecar.Outbound = netip.AddrPortFrom(any4, AppMeshEgressPort)
		c.Sidecar.Admin = netip.AddrPortFrom(any4, AppMeshAdminPort)
		// App Mesh's Envoy sends inbound traffic to the app on 127.0.0.1
		// (its local app cluster), from the proxy's own user, which its
		// iptables rules leave uncaptured: no bound source address.
		c.Sidecar.App = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), s.App.Port())
		c.Sidecar.InboundSource = netip.Addr{}
		c.NodeID = "mesh/loadgen/virtualNode/loadgen"
		c.NodeCluster = "mesh/loadgen/virtualNode/loadgen"
	default:
		c.Stats = netip.AddrPortFrom(netip.IPv4Unspecified(), layout.StatsPort)
	}
	return c
}

// Validate reports the first thing wrong with c, in one line (the
// bootstrap itself is checked by Bootstrap).
func (c Config) Validate() error {
	if _, err := ParseLayout(string(c.Layout)); err != nil {
		return err
	}
	if err := c.Sidecar.Validate(); err != nil {
		return err
	}
	switch {
	case c.Sidecar.UpstreamName != "":
		return fmt.Errorf("envoy: the upstream is an address here (a static cluster), not the name %s", c.Sidecar.UpstreamName)
	case c.Layout == Istio && (!c.Stats.IsValid() || c.Stats.Port() == 0):
		return fmt.Errorf("envoy: the istio layout needs a stats listener (0.0.0.0:%d)", layout.StatsPort)
	case c.Layout == AppMesh && c.Stats.IsValid():
		return fmt.Errorf("envoy: the appmesh layout has no stats listener: scrape the admin's /stats/prometheus")
	case c.NodeID == "" || c.NodeCluster == "":
		return fmt.Errorf("envoy: node id and cluster must be set")
	}
	return nil
}

// concurrency is --concurrency: Istio's proxy sets it (2 by default); App
// Mesh's leaves Envoy's default, one worker per CPU, unless Workers says.
func (c Config) concurrency() int {
	if c.Layout == AppMesh && c.Sidecar.Workers == 0 {
		return 0
	}
	return c.Sidecar.Threads()
}

// Available reports where envoy is; its error says how to get one.
func Available() (string, error) { return Config{}.binary() }

// noPackage says why envoy is not installed for the user.
const noPackage = "no Envoy package exists in Debian or the other registries this machine reaches: put an envoy binary (from Envoy's release builds or the envoyproxy/envoy image) on PATH"

func (c Config) binary() (string, error) {
	return proxyproc.Find(c.Binary, "envoy", "", noPackage)
}
