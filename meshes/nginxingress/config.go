// Package nginxingress is the "ingress" path of a sweep: a real nginx,
// run locally as a reverse proxy in front of a target, configured the way
// NGINX Ingress proxies (HTTP/1.1 keepalive to the upstream, no access log,
// no response buffering). The nginx.conf is rendered from a typed Config,
// never from strings a user typed, and everything nginx writes stays in one
// run directory.
package nginxingress

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// Defaults and bounds for Config.
const (
	DefaultWorkers           = 1
	DefaultUpstreamKeepalive = 64

	// WorkersAuto renders "worker_processes auto": one worker per CPU.
	WorkersAuto = -1

	maxWorkers = 1024 // a typo guard: each worker is a process
	maxCPU     = 1023 // nginx's cpu masks hold CPU_SETSIZE (1024) bits
)

// Config describes one local nginx in front of one upstream.
type Config struct {
	// Listen is the IP:PORT nginx listens on, e.g. 127.0.0.1:8080. Port 0
	// picks a free port (nginx cannot be told ":0", so Start binds a port,
	// closes it, hands it to nginx, and retries if it was taken meanwhile).
	Listen string

	// Upstream is the HOST:PORT of the target (an IP or a DNS name; nginx
	// resolves names once, when it loads the config).
	Upstream string

	// Workers is worker_processes: 0 means DefaultWorkers, WorkersAuto means
	// "auto" (one per CPU, as nginx counts them).
	Workers int

	// CPUAffinity, when set, pins worker i to CPU CPUAffinity[i mod len]
	// (worker_cpu_affinity), for sizing by CPU. With WorkersAuto nginx binds
	// worker i to the i-th CPU of the set, in ascending order.
	CPUAffinity []int

	// TLS, when set, makes the listener "ssl http2" with these PEM files.
	// Session cache and tickets are off, so every new connection is a full
	// handshake: what NGINX's "SSL TPS" figures measure.
	TLS *TLSFiles

	// UpstreamKeepalive is the number of idle keepalive connections each
	// worker keeps to the upstream: 0 means DefaultUpstreamKeepalive, a
	// negative value turns upstream keepalive off (a new upstream
	// connection per request).
	UpstreamKeepalive int

	// GRPC proxies gRPC: the listener speaks HTTP/2 (h2c in plaintext) and
	// requests go to the upstream with grpc_pass over HTTP/2.
	GRPC bool

	// HTTP2 makes a plaintext listener speak HTTP/2 with prior knowledge
	// (h2c) to clients; the upstream is still reached over HTTP/1.1.
	HTTP2 bool

	// Dir is nginx's prefix (-p): the config, pid file, error log and temp
	// paths all go here. Empty means a new temporary directory, removed by
	// Close. A Dir given here is created if need be and kept; when nginx
	// starts as root its workers run as nobody, and reach the temp paths
	// only if Dir lets them through (mode 0711 or wider).
	Dir string

	// Binary is the nginx executable; empty means nginx on PATH, then
	// /usr/sbin/nginx (see Available).
	Binary string

	// Sidecar, when set, renders the sidecar layout instead (see
	// meshes/layout: inbound listener to the local app, outbound listener
	// to the upstream with keepalive, stub_status on the admin listener,
	// mTLS between sidecars); Listen, Upstream and the other ingress
	// fields must then be unset.
	Sidecar *layout.Sidecar
	// NetNS is the network namespace (a name under /var/run/netns) nginx
	// runs in; empty: this process's.
	NetNS string
	// User runs nginx, master and workers, as that user (a sidecar in a
	// pod with capture rules runs as layout.ProxyUID); nil: as this
	// process (as root, the workers run as nobody).
	User *proxyproc.User
}

// TLSFiles names the PEM certificate (chain) and private key nginx serves.
// Relative paths resolve against the working directory of Start.
type TLSFiles struct {
	Cert string
	Key  string
	// ClientCA, when set, makes nginx require a client certificate that
	// these CAs (PEM) issued (ssl_verify_client on): mutual TLS. A
	// request without one is answered 400.
	ClientCA string
}

// Validate reports the first thing wrong with c, in one line. Everything
// that Render writes into nginx.conf is checked here, so a value cannot add
// directives of its own (no ';', '{', quotes, spaces or newlines).
func (c Config) Validate() error {
	if c.Sidecar != nil {
		return c.validateSidecar()
	}
	if err := checkListen(c.Listen); err != nil {
		return err
	}
	if err := checkUpstream(c.Upstream); err != nil {
		return err
	}
	if c.Workers < WorkersAuto || c.Workers > maxWorkers {
		return fmt.Errorf("nginxingress: workers must be 1 to %d, 0 (default %d) or %d (auto), not %d",
			maxWorkers, DefaultWorkers, WorkersAuto, c.Workers)
	}
	for _, cpu := range c.CPUAffinity {
		if cpu < 0 || cpu > maxCPU {
			return fmt.Errorf("nginxingress: cpu affinity: CPU %d is out of range 0-%d", cpu, maxCPU)
		}
	}
	if c.TLS != nil {
		if err := checkPath("tls cert", c.TLS.Cert); err != nil {
			return err
		}
		if err := checkPath("tls key", c.TLS.Key); err != nil {
			return err
		}
		if c.TLS.ClientCA != "" {
			if err := checkPath("tls client ca", c.TLS.ClientCA); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkListen accepts IP:PORT with an IP literal and a port 0-65535.
func checkListen(s string) error {
	const want = "want IP:PORT, e.g. 127.0.0.1:8080"
	if s == "" {
		return fmt.Errorf("nginxingress: listen address is empty: %s", want)
	}
	if err := checkChars("listen address", s, isAddrChar); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("nginxingress: listen address %q: %s", s, want)
	}
	if ip := net.ParseIP(host); ip == nil {
		return fmt.Errorf("nginxingress: listen address %q: %q is not an IP address; %s", s, host, want)
	}
	if _, err := parsePort(port, 0); err != nil {
		return fmt.Errorf("nginxingress: listen address %q: %v", s, err)
	}
	return nil
}

// checkUpstream accepts HOST:PORT with an IP literal or a DNS name and a
// port 1-65535.
func checkUpstream(s string) error {
	const want = "want HOST:PORT, e.g. 127.0.0.1:8081"
	if s == "" {
		return fmt.Errorf("nginxingress: upstream is empty: %s", want)
	}
	if err := checkChars("upstream", s, isAddrChar); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("nginxingress: upstream %q: %s", s, want)
	}
	if net.ParseIP(host) == nil && !isHostname(host) {
		return fmt.Errorf("nginxingress: upstream %q: %q is neither an IP address nor a host name", s, host)
	}
	if _, err := parsePort(port, 1); err != nil {
		return fmt.Errorf("nginxingress: upstream %q: %v", s, err)
	}
	return nil
}

// checkPath accepts a file path that can be written inside double quotes
// in nginx.conf: no quotes, backslashes, '$' (nginx expands variables in
// ssl_certificate) or control characters.
func checkPath(what, s string) error {
	if s == "" {
		return fmt.Errorf("nginxingress: %s path is empty", what)
	}
	return checkChars(what+" path", s, func(r rune) bool {
		return r != '"' && r != '\\' && r != '$' && !unicode.IsControl(r)
	})
}

// checkChars names the first character of s that ok rejects.
func checkChars(what, s string, ok func(rune) bool) error {
	if i := strings.IndexFunc(s, func(r rune) bool { return !ok(r) }); i >= 0 {
		r := []rune(s[i:])[0]
		return fmt.Errorf("nginxingress: %s %q: character %q is not allowed in nginx.conf", what, s, r)
	}
	return nil
}

// isAddrChar reports whether r is one of the letters, digits and the
// punctuation of host:port, [v6]:port.
func isAddrChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '-' || r == ':' || r == '[' || r == ']'
}

// isHostname checks RFC 1123 labels: 1-63 letters, digits or '-', not at
// either end of a label.
func isHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' ||
			strings.ContainsAny(label, ":[]") {
			return false
		}
	}
	return true
}

func parsePort(s string, lowest int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lowest || n > 65535 {
		return 0, fmt.Errorf("port %q must be a number from %d to 65535", s, lowest)
	}
	return n, nil
}

// workers is the worker count nginx will run, or 0 for auto.
func (c Config) workers() int {
	if c.Sidecar != nil {
		return c.Sidecar.Threads()
	}
	switch c.Workers {
	case 0:
		return DefaultWorkers
	case WorkersAuto:
		return 0
	}
	return c.Workers
}

// keepalive is the upstream keepalive pool size, or 0 for none.
func (c Config) keepalive() int {
	switch {
	case c.UpstreamKeepalive == 0:
		return DefaultUpstreamKeepalive
	case c.UpstreamKeepalive < 0:
		return 0
	}
	return c.UpstreamKeepalive
}
