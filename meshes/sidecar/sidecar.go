// Package sidecar puts real proxies in the path between two pods the way
// a service mesh does, on one machine: inside each pod's network namespace
// it writes the NAT chains Istio's istio-iptables writes (inbound TCP
// redirected to the proxy's port 15006, outbound to 15001, the proxy's own
// traffic exempt by its UID and GID, 1337), and starts the proxy there as
// that user. The client and the target stay as they are: the redirect
// makes their connections go through the sidecars, as in a cluster.
// Placements are istio/tools' names: none (the baseline, same pods),
// serveronly, clientonly and both, where the sidecars can speak mutual TLS
// with certificates of a CA made for the run.
//
// The caller owns the namespaces (the CNI lab's pods, or a test's): every
// rule goes into them and is removed by Close; nothing is written to the
// host's tables.
package sidecar

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"loadgen/internal/sidecarnames"
	"loadgen/meshes/layout"
	"loadgen/meshes/leftover"
	"loadgen/meshes/mtls"
	"loadgen/meshes/proxyproc"
)

// Proxy names a sidecar profile.
type Proxy string

const (
	Nginx   Proxy = sidecarnames.Nginx
	HAProxy Proxy = sidecarnames.HAProxy
	Caddy   Proxy = sidecarnames.Caddy
	Envoy   Proxy = sidecarnames.Envoy // Istio's layout; needs an envoy binary on PATH
)

// Proxies lists the profiles: internal/sidecarnames' list.
var Proxies = typed[Proxy](sidecarnames.Proxies())

// Placement says which pods get a sidecar.
type Placement string

const (
	None       Placement = sidecarnames.None
	ServerOnly Placement = sidecarnames.ServerOnly
	ClientOnly Placement = sidecarnames.ClientOnly
	Both       Placement = sidecarnames.Both
)

// Placements lists the placements in report order: internal/sidecarnames'.
var Placements = typed[Placement](sidecarnames.Placements())

func typed[T ~string](names []string) []T {
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = T(n)
	}
	return out
}

// ParseProxy and ParsePlacement read the names above.
func ParseProxy(s string) (Proxy, error) {
	for _, p := range Proxies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("sidecar: unknown proxy %q: use nginx, haproxy, caddy or envoy", s)
}

func ParsePlacement(s string) (Placement, error) {
	for _, p := range Placements {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("sidecar: unknown placement %q: use none, serveronly, clientonly or both", s)
}

// Config is one sidecar path between a client pod and a server pod.
type Config struct {
	Proxy     Proxy
	Placement Placement

	// ClientNS and ServerNS are the pods' network namespaces (names under
	// /var/run/netns), made by the caller.
	ClientNS, ServerNS string
	// ServerAddr is the target's IP:port in ServerNS, the address the
	// client dials. The target must listen on it; with Caddy, whose
	// inbound side forwards to 127.0.0.1:PORT, on 0.0.0.0:PORT.
	ServerAddr netip.AddrPort
	// ClientIP is the client pod's IP (it names the client's Envoy node);
	// optional.
	ClientIP netip.Addr

	// MTLS makes the server's sidecar require mutual TLS (Istio's STRICT):
	// in Both the client's sidecar originates it; in ServerOnly the
	// client, which has no sidecar, speaks it itself with the client
	// workload's identity (ClientIdentity), as `loadgen run --cert` does.
	MTLS bool
	// Workers is each proxy's workers: 0 means Istio's concurrency, 2.
	Workers int
	// Count lets Requests read every proxy's request counter. Only Caddy
	// pays for it (it counts by its access log, which costs CPU): leave it
	// off when measuring.
	Count bool
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if _, err := ParseProxy(string(c.Proxy)); err != nil && c.Placement != None {
		return err
	}
	if _, err := ParsePlacement(string(c.Placement)); err != nil {
		return err
	}
	switch {
	case c.ClientNS == "" || c.ServerNS == "":
		return errors.New("sidecar: the client and server network namespaces must be named")
	case c.ClientNS == c.ServerNS:
		return fmt.Errorf("sidecar: client and server must be two pods, not both %s", c.ClientNS)
	case !c.ServerAddr.IsValid() || c.ServerAddr.Port() == 0:
		return fmt.Errorf("sidecar: server address %q: want the target's IP:PORT", c.ServerAddr)
	case c.MTLS && c.Placement != Both && c.Placement != ServerOnly:
		return fmt.Errorf("sidecar: mTLS is required by the server's sidecar: placement both or serveronly, not %s", c.Placement)
	}
	return nil
}

// Sidecar is a running sidecar path: the capture rules in the pods that
// have a sidecar, and their proxies.
type Sidecar struct {
	cfg      Config
	captured []string // namespaces with rules in them
	client   running  // nil without a client sidecar
	server   running
	dir      string // the CA's files
	cert     *x509.Certificate
	identity *layout.MTLS // the client workload's files
}

// running is a started profile.
type running interface {
	PIDs() ([]int, error)
	Requests() (uint64, error)
	Done() <-chan struct{}
	Tail() string
	Close() error
}

// proxyUser is Istio's istio-proxy.
var proxyUser = &proxyproc.User{UID: layout.ProxyUID, GID: layout.ProxyGID}

// Start writes the capture rules into the pods the placement names and
// starts a proxy in each, as UID 1337; with MTLS first a CA and the two
// workloads' certificates (default/loadgen for the client, default/httpbin
// for the server). It needs root. On error nothing is left behind.
//
// To plug a sidecar path into a sweep step: Start before the step, point
// the load at ServerAddr from ClientNS, watch Pids' processes for the
// step's cost, and Close after it; a proxy that died mid-step is in
// Err, with its last log lines.
func Start(ctx context.Context, cfg Config) (*Sidecar, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sidecar{cfg: cfg}
	if cfg.Placement == None {
		return s, nil
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("sidecar: capturing a pod's traffic needs root (network namespaces, iptables, a proxy as UID 1337)")
	}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Sidecar) start(ctx context.Context) error {
	cfg := s.cfg
	var clientFiles, serverFiles *layout.MTLS
	if cfg.MTLS {
		var err error
		if clientFiles, serverFiles, err = s.issue(); err != nil {
			return err
		}
	}
	if cfg.Placement == ServerOnly || cfg.Placement == Both {
		if err := s.capture(ctx, cfg.ServerNS); err != nil {
			return err
		}
		lay := layout.Pod(cfg.ServerAddr.Addr(), cfg.ServerAddr.Port(), cfg.ServerAddr)
		lay.Workers, lay.MTLS = cfg.Workers, serverFiles
		p, err := startProxy(ctx, cfg, cfg.ServerNS, cfg.ServerAddr.Addr(), lay)
		if err != nil {
			return fmt.Errorf("sidecar: server %s: %w", cfg.Proxy, err)
		}
		s.server = p
	}
	if cfg.Placement == ClientOnly || cfg.Placement == Both {
		if err := s.capture(ctx, cfg.ClientNS); err != nil {
			return err
		}
		ip := cfg.ClientIP
		if !ip.IsValid() {
			ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
		// The client pod serves nothing: its inbound side is there, as in
		// Istio, and idle.
		lay := layout.Pod(ip, cfg.ServerAddr.Port(), cfg.ServerAddr)
		lay.Workers, lay.MTLS = cfg.Workers, clientFiles
		p, err := startProxy(ctx, cfg, cfg.ClientNS, ip, lay)
		if err != nil {
			return fmt.Errorf("sidecar: client %s: %w", cfg.Proxy, err)
		}
		s.client = p
	}
	return nil
}

func (s *Sidecar) capture(ctx context.Context, ns string) error {
	if err := IstioCapture.install(ctx, ns); err != nil {
		return err
	}
	s.captured = append(s.captured, ns)
	return nil
}

// issue makes the run's CA and the two workloads' files, readable by the
// proxies' user.
func (s *Sidecar) issue() (client, server *layout.MTLS, err error) {
	if s.dir, err = leftover.TempDir("mtls"); err != nil {
		return nil, nil, fmt.Errorf("sidecar: %w", err)
	}
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("sidecar: %w", err)
	}
	ca, err := mtls.New(s.dir)
	if err != nil {
		return nil, nil, err
	}
	clientW, serverW := mtls.DefaultPair()
	client, cert, err := ca.Issue(clientW, serverW)
	if err != nil {
		return nil, nil, err
	}
	server, _, err = ca.Issue(serverW, clientW)
	if err != nil {
		return nil, nil, err
	}
	if err := proxyproc.Chown(proxyUser, client.Key, server.Key); err != nil {
		return nil, nil, fmt.Errorf("sidecar: %w", err)
	}
	s.cert, s.identity = cert.Leaf, client
	return client, server, nil
}

// ClientCert is the client workload's certificate (with MTLS), whose hash
// the server sidecar forwards to the target in X-Forwarded-Client-Cert.
func (s *Sidecar) ClientCert() *x509.Certificate { return s.cert }

// ClientIdentity names the PEM files of the client workload's identity
// (with MTLS; nil without): the run's CA, the certificate and key, and
// the server's name to verify (PeerName). In ServerOnly a client that
// presents them is what the server's sidecar lets through: `loadgen run
// --cacert CA --sni PeerName --cert Cert --key Key`. They go with Close.
func (s *Sidecar) ClientIdentity() *layout.MTLS { return s.identity }

// Pids lists the processes of every sidecar of the path, client's first:
// what a step's proxy cost is sampled from. None has none.
func (s *Sidecar) Pids() ([]int, error) {
	var pids []int
	for _, p := range []running{s.client, s.server} {
		if p == nil {
			continue
		}
		ps, err := p.PIDs()
		if err != nil {
			return nil, err
		}
		pids = append(pids, ps...)
	}
	return pids, nil
}

// Workers is each proxy's workers as it runs them (Config.Workers, or
// Istio's default).
func (s *Sidecar) Workers() int { return layout.Sidecar{Workers: s.cfg.Workers}.Threads() }

// Requests is what the client's and the server's sidecar counted (0 for a
// pod without one).
func (s *Sidecar) Requests() (client, server uint64, err error) {
	if s.client != nil {
		if client, err = s.client.Requests(); err != nil {
			return 0, 0, err
		}
	}
	if s.server != nil {
		if server, err = s.server.Requests(); err != nil {
			return 0, 0, err
		}
	}
	return client, server, nil
}

// Err reports a sidecar that has died, with its last log lines; nil while
// all run.
func (s *Sidecar) Err() error {
	for _, side := range []struct {
		name string
		p    running
	}{{"client", s.client}, {"server", s.server}} {
		if side.p == nil {
			continue
		}
		select {
		case <-side.p.Done():
			return fmt.Errorf("sidecar: the %s's %s died: %s", side.name, s.cfg.Proxy, side.p.Tail())
		default:
		}
	}
	return nil
}

// Close stops the proxies, removes the capture rules from the pods and
// the CA's files, and reports what went wrong on the way (a proxy that
// had died, with its last log lines). Safe to call on a partly started
// Sidecar.
func (s *Sidecar) Close() error {
	var errs []error
	for _, p := range []running{s.client, s.server} {
		if p != nil {
			if err := p.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, ns := range s.captured {
		if err := remove(context.Background(), ns); err != nil {
			errs = append(errs, err)
		}
	}
	s.client, s.server, s.captured, s.identity = nil, nil, nil, nil
	if s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("sidecar: %w", err))
		}
		s.dir = ""
	}
	return errors.Join(errs...)
}

// String names the path as a sweep would: "nginx both mtls".
func (c Config) String() string {
	parts := []string{string(c.Proxy), string(c.Placement)}
	if c.Placement == None {
		parts = parts[1:]
	}
	if c.MTLS {
		parts = append(parts, "mtls")
	}
	return strings.Join(parts, " ")
}
