// Package layout is the shape of a sidecar as every proxy profile renders
// it (meshes/nginxingress, haproxy, caddy, envoy): an inbound listener, where
// the capture rules send connections to the pod, forwarding to the local
// app; an outbound listener, where they send the app's own connections,
// forwarding to the upstream over kept-alive connections; an admin listener
// for the proxy's counters; and, between two sidecars, mutual TLS. Ports
// and the proxy's identity are Istio's.
package layout

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"loadgen/internal/sidecarnames"
)

// Istio's sidecar ports and identity.
const (
	OutboundPort = 15001 // virtualOutbound: istio-iptables' ISTIO_REDIRECT target
	InboundPort  = 15006 // virtualInbound: ISTIO_IN_REDIRECT's target
	AdminPort    = 15000 // Envoy's admin (Istio binds it to localhost)
	StatsPort    = 15090 // Prometheus stats, exempt from inbound capture
	ProxyUID     = 1337  // istio-proxy: the capture rules exempt its traffic
	ProxyGID     = 1337

	// InboundSource is the address Istio's inbound side binds its
	// connections to the app to: istio-iptables returns "-o lo -s
	// 127.0.0.6" before anything else, so they are not captured again.
	InboundSource = "127.0.0.6"

	// DefaultWorkers is Istio's default proxy concurrency (worker threads).
	DefaultWorkers = 2
	maxWorkers     = 256
)

// Sidecar is the listeners of one sidecar proxy.
type Sidecar struct {
	// Inbound is where captured inbound connections arrive (0.0.0.0:15006
	// in a pod), App the local app they go to (the pod's IP:port).
	Inbound netip.AddrPort
	App     netip.AddrPort
	// InboundSource, if valid, is the source address of the connections to
	// App (InboundSource in a pod with capture rules; unset on loopback).
	InboundSource netip.Addr

	// Outbound is where the app's captured outbound connections arrive
	// (0.0.0.0:15001), Upstream where they go: the server pod's IP:port.
	Outbound netip.AddrPort
	Upstream netip.AddrPort
	// UpstreamName, when set, is where the outbound side goes instead of
	// Upstream: HOST:PORT with a DNS name (a Service's, in a cluster),
	// which the proxy resolves itself.
	UpstreamName string

	// Admin is the listener of the proxy's own counters (127.0.0.1:15000).
	Admin netip.AddrPort

	// Workers is the proxy's worker threads or processes: 0 means
	// DefaultWorkers.
	Workers int

	// MTLS, when set, makes the inbound listener require mutual TLS from
	// the peer's sidecar and the outbound side originate it.
	MTLS *MTLS
}

// MTLS names the PEM files of one workload's identity and what it expects
// of its peer, as a mesh's CA issues them (see meshes/mtls).
type MTLS struct {
	CA   string // the mesh's root certificate: peers must chain to it
	Cert string // this workload's certificate (URI SAN: its SPIFFE ID)
	Key  string // and its private key
	// PeerID is the SPIFFE ID the outbound side requires of the server
	// (spiffe://cluster.local/ns/NS/sa/SA): Envoy matches it; the other
	// proxies cannot match a URI SAN and check PeerName instead.
	PeerID string
	// PeerName is the DNS name in the server's certificate
	// (SA.NS.svc.cluster.local), sent as SNI and verified.
	PeerName string
}

// Validate reports the first thing wrong with s, in one line.
func (s Sidecar) Validate() error {
	for _, a := range []struct {
		name string
		v    netip.AddrPort
	}{{"inbound", s.Inbound}, {"app", s.App}, {"outbound", s.Outbound}, {"upstream", s.Upstream}, {"admin", s.Admin}} {
		if a.name == "upstream" && s.UpstreamName != "" {
			if err := checkHostPort(s.UpstreamName); err != nil {
				return err
			}
			continue
		}
		if !a.v.IsValid() || a.v.Port() == 0 {
			return fmt.Errorf("sidecar: %s address %q: want IP:PORT with a port from 1 to 65535", a.name, a.v)
		}
	}
	if s.Inbound == s.Outbound || s.Inbound == s.Admin || s.Outbound == s.Admin {
		return fmt.Errorf("sidecar: inbound %s, outbound %s and admin %s must be three addresses", s.Inbound, s.Outbound, s.Admin)
	}
	if s.Workers < 0 || s.Workers > maxWorkers {
		return fmt.Errorf("sidecar: workers must be 1 to %d, or 0 (default %d), not %d", maxWorkers, DefaultWorkers, s.Workers)
	}
	if s.MTLS != nil {
		return s.MTLS.Validate()
	}
	return nil
}

// UpstreamAddr is where the outbound side forwards: UpstreamName, else
// Upstream.
func (s Sidecar) UpstreamAddr() string {
	if s.UpstreamName != "" {
		return s.UpstreamName
	}
	return s.Upstream.String()
}

// checkHostPort accepts a DNS name and a port from 1 to 65535.
func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 || !isHostname(host) {
		return fmt.Errorf("sidecar: upstream name %q: want HOST:PORT, a DNS name and a port from 1 to 65535", hp)
	}
	return nil
}

// Threads is the worker count the proxy runs.
func (s Sidecar) Threads() int {
	if s.Workers == 0 {
		return DefaultWorkers
	}
	return s.Workers
}

// Validate checks that every path can be written into any proxy's config
// unquoted (letters, digits and . _ - + / @ only), and that PeerID is a
// SPIFFE ID.
func (m MTLS) Validate() error {
	for _, f := range []struct{ name, v string }{{"ca", m.CA}, {"cert", m.Cert}, {"key", m.Key}} {
		if f.v == "" {
			return fmt.Errorf("sidecar: mtls %s path is empty", f.name)
		}
		if i := strings.IndexFunc(f.v, func(r rune) bool { return !isPathChar(r) }); i >= 0 {
			return fmt.Errorf("sidecar: mtls %s path %q: character %q is not allowed in a proxy config", f.name, f.v, []rune(f.v[i:])[0])
		}
	}
	if !isHostname(m.PeerName) {
		return fmt.Errorf("sidecar: mtls peer name %q: want a DNS name (letters, digits, '-', '.')", m.PeerName)
	}
	return CheckSPIFFEID(m.PeerID)
}

// isHostname checks RFC 1123 labels: 1-63 letters, digits or '-', not at
// either end of a label.
func isHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' ||
			strings.IndexFunc(label, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
			}) >= 0 {
			return false
		}
	}
	return true
}

// CheckSPIFFEID accepts spiffe://TRUST-DOMAIN/PATH written with letters,
// digits and . _ - / only.
func CheckSPIFFEID(id string) error {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "spiffe" || u.Host == "" || u.Path == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("sidecar: peer id %q: want a SPIFFE ID, spiffe://cluster.local/ns/NS/sa/SA", id)
	}
	if i := strings.IndexFunc(id, func(r rune) bool { return !isIDChar(r) }); i >= 0 {
		return fmt.Errorf("sidecar: peer id %q: character %q is not allowed", id, []rune(id[i:])[0])
	}
	return nil
}

func isIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_/:", r)
}

func isPathChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+/@", r)
}

// Loopback is a sidecar layout on 127.0.0.1 with the given ports, for
// running a profile without a network namespace (tests, mesh render).
func Loopback(inbound, app, outbound, upstream, admin uint16) Sidecar {
	lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	return Sidecar{
		Inbound:  netip.AddrPortFrom(lo, inbound),
		App:      netip.AddrPortFrom(lo, app),
		Outbound: netip.AddrPortFrom(lo, outbound),
		Upstream: netip.AddrPortFrom(lo, upstream),
		Admin:    netip.AddrPortFrom(lo, admin),
	}
}

// Unbound is s for a proxy that cannot bind the source address of its
// connections to the app (Caddy): no InboundSource, and the inbound side
// forwarding to the app's port on 127.0.0.1, which the capture rules let
// through (as Istio did before 1.10); the app listens there too.
func (s Sidecar) Unbound() Sidecar {
	s.InboundSource = netip.Addr{}
	s.App = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), s.App.Port())
	return s
}

// BindsSource tells whether the proxy named proxy (internal/sidecarnames)
// binds the source address of its connections to the app, InboundSource:
// all but Caddy.
func BindsSource(proxy string) bool { return proxy != sidecarnames.Caddy }

// ForProxy is s as the proxy named proxy serves it: Unbound for a proxy
// that cannot bind InboundSource (BindsSource), s for the rest.
func (s Sidecar) ForProxy(proxy string) Sidecar {
	if !BindsSource(proxy) {
		return s.Unbound()
	}
	return s
}

// NoInboundSource is the inbound source given as none: the inbound side
// binds no source address (WithInboundSource).
const NoInboundSource = "none"

// WithInboundSource is s with the source address of the inbound side's
// connections to the app given as src, as loadgen mesh render's
// --inbound-source gives it: an IP address, or NoInboundSource for none.
// InboundSource, the default, is none for a proxy that cannot bind it
// (BindsSource). With none, s is as the proxy serves it (ForProxy: Caddy
// forwards inbound to 127.0.0.1:PORT) unless the app's address was given
// (appGiven): that one stays.
func (s Sidecar) WithInboundSource(proxy, src string, appGiven bool) (Sidecar, error) {
	if src == NoInboundSource || !BindsSource(proxy) && src == InboundSource {
		s.InboundSource = netip.Addr{}
		if !appGiven {
			s = s.ForProxy(proxy)
		}
		return s, nil
	}
	a, err := netip.ParseAddr(src)
	if err != nil {
		return Sidecar{}, fmt.Errorf("%q: not an IP address (or %s)", src, NoInboundSource)
	}
	s.InboundSource = a
	return s, nil
}

// Pod is the layout of a sidecar in a pod whose IP is podIP, the app
// listening on appPort, and the outbound side forwarding to upstream:
// Istio's ports, the inbound side bound to InboundSource.
func Pod(podIP netip.Addr, appPort uint16, upstream netip.AddrPort) Sidecar {
	any4 := netip.IPv4Unspecified()
	return Sidecar{
		Inbound:       netip.AddrPortFrom(any4, InboundPort),
		App:           netip.AddrPortFrom(podIP, appPort),
		InboundSource: netip.MustParseAddr(InboundSource),
		Outbound:      netip.AddrPortFrom(any4, OutboundPort),
		Upstream:      upstream,
		Admin:         netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), AdminPort),
	}
}
