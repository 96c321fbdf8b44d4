// Package sidecarnames holds the names of loadgen's sidecar proxies and
// placements, the one list meshes/sidecar and meshes/k8s run and
// loadgen/sweep and loadgen/study check a plan against (those may not
// import meshes).
package sidecarnames

// The proxies a sidecar runs.
const (
	Nginx   = "nginx"
	HAProxy = "haproxy"
	Caddy   = "caddy"
	Envoy   = "envoy"
)

// The placements, istio/tools' names: which pods get a sidecar.
const (
	None       = "none"
	ServerOnly = "serveronly"
	ClientOnly = "clientonly"
	Both       = "both"
)

// Proxies returns the local sidecar profiles (meshes/sidecar).
func Proxies() []string { return []string{Nginx, HAProxy, Caddy, Envoy} }

// Placements returns the placements in report order.
func Placements() []string { return []string{None, ServerOnly, ClientOnly, Both} }

// ClusterProxies returns the proxies of the cluster's sidecar mesh
// (meshes/k8s, --mesh sidecar): the local ones but Envoy.
func ClusterProxies() []string { return []string{Nginx, HAProxy, Caddy} }
