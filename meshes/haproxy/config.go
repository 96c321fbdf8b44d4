// Package haproxy is the HAProxy sidecar profile: a real haproxy (Debian
// package haproxy) in the sidecar layout of meshes/layout, its
// haproxy.cfg rendered from a typed Config and checked by `haproxy -c`
// before it runs. HTTP mode, kept-alive upstream connections shared
// between clients (http-reuse always), threads as Istio's concurrency.
package haproxy

import (
	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// Config is one haproxy sidecar.
type Config struct {
	Sidecar layout.Sidecar

	// NetNS is the network namespace (a name under /var/run/netns) haproxy
	// runs in; empty: this process's.
	NetNS string
	// User runs haproxy as that user (layout.ProxyUID in a pod with
	// capture rules); nil: as this process.
	User *proxyproc.User

	// Dir is the run directory (config, logs, admin socket); empty means a
	// new temporary directory, removed by Close.
	Dir string
	// Binary is the haproxy executable; empty: haproxy on PATH, then
	// /usr/sbin/haproxy.
	Binary string
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error { return c.Sidecar.Validate() }

// Available reports where haproxy is; its error says how to install it.
func Available() (string, error) { return Config{}.binary() }

func (c Config) binary() (string, error) {
	return proxyproc.Find(c.Binary, "haproxy", "/usr/sbin/haproxy", "apt-get install haproxy")
}
