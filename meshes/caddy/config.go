// Package caddy is the Caddy sidecar profile, a proxy written in Go, for
// contrast with the C ones: a real caddy (Debian package caddy) in the
// sidecar layout of meshes/layout, its JSON config marshalled from typed
// structs and checked by `caddy validate` before it runs. GOMAXPROCS is
// Istio's concurrency.
package caddy

import (
	"fmt"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// Config is one caddy sidecar.
type Config struct {
	// Sidecar is the layout. Caddy cannot bind the source address of its
	// upstream connections, so InboundSource must be unset: in a pod the
	// inbound side forwards to 127.0.0.1:PORT (as Istio did before 1.10),
	// which the capture rules let through, and the app listens there too.
	Sidecar layout.Sidecar

	// AccessLog logs every request (one JSON line) to access.log in the
	// run directory, which is how Requests counts them: Caddy 2.6 keeps
	// no request counter. It costs CPU; sweeps leave it off.
	AccessLog bool

	// Metrics turns on Caddy's HTTP metrics on both servers: its request
	// counter, which Requests then reads (caddy_http_requests_total) on
	// the admin listener's /metrics. Caddy's docs (caddyserver.com/docs/
	// metrics): "If using JSON, add "metrics": {} to your apps > http >
	// servers configuration", and "a /metrics endpoint is also attached
	// to the admin API" (the metrics directive's page). Since Caddy 2.6
	// they are off unless asked for; Debian's 2.6.2 and the official
	// 2.8 image take the field.
	Metrics bool

	// NetNS is the network namespace (a name under /var/run/netns) caddy
	// runs in; empty: this process's.
	NetNS string
	// User runs caddy as that user; nil: as this process.
	User *proxyproc.User

	// Dir is the run directory (config, logs, caddy's storage); empty
	// means a new temporary directory, removed by Close.
	Dir string
	// Binary is the caddy executable; empty: caddy on PATH, then
	// /usr/bin/caddy.
	Binary string
}

// StandaloneDir is the run directory of a config rendered for a caddy
// that loadgen does not start (loadgen mesh render caddy): where that
// caddy keeps its storage, and its access log with AccessLog. Start
// always sets a directory of its own.
const StandaloneDir = "/var/lib/loadgen/caddy"

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if err := c.Sidecar.Validate(); err != nil {
		return err
	}
	if c.Sidecar.InboundSource.IsValid() {
		return fmt.Errorf("caddy: cannot bind upstream connections to %s: leave InboundSource unset and forward the inbound side to 127.0.0.1:%d", c.Sidecar.InboundSource, c.Sidecar.App.Port())
	}
	return nil
}

// Available reports where caddy is; its error says how to install it.
func Available() (string, error) { return Config{}.binary() }

func (c Config) binary() (string, error) {
	return proxyproc.Find(c.Binary, "caddy", "/usr/bin/caddy", "apt-get install caddy")
}
