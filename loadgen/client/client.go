// Package client builds the Dialer of a load target from a typed Spec: the
// protocol, the target, the request and its options, as every front end
// gives them — `loadgen run`'s flags, a sweep's step, the lab, a study, a
// Kubernetes worker. It checks the combination first and says what to do
// in one line; nothing of it is in the command line's code.
package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/netns"
	"loadgen/results"
)

// Spec is one load target, as asked.
type Spec struct {
	Protocol string // http1 (default), h2, h2c, h3, grpc, grpc-stream, tcp-rr, tcp-crr, tcp-stream, udp-rr, udp-stream
	Target   string // http(s):// URL, or host:port for grpc and tcp; host:port/path is taken as http://
	Method   string // HTTP; default GET, or POST with a body
	Headers  []string
	Body     []byte
	Size     int // grpc, tcp and udp payload bytes; tcp and udp default 1024
	Streams  int // concurrent streams per connection (h2, h3, grpc)
	// Connections is the run's connection count: gRPC groups its streams
	// by it.
	Connections int
	// Timeout bounds a connect (and a --call's reflection lookup).
	Timeout time.Duration
	// TLS are the client's TLS options; an https:// target turns them on.
	TLS protocol.TLS
	// Client is "loadgen" (or ""), or the reference client under the
	// protocol: x-net (h2, h2c) or grpc-go (grpc, grpc-stream).
	Client string
	// NetNS sends from this network namespace (needs root).
	NetNS string
	// Health calls grpc.health.v1.Health/Check (-p grpc).
	Health bool
	// Call, Data and Protoset load any gRPC method: pkg.Service/Method, its
	// message as JSON (@FILE reads a file), types by reflection or from a
	// FileDescriptorSet.
	Call, Data, Protoset string
	// Proto are .proto files to parse for a Call's types instead, their
	// imports found in ImportPaths (protoc's -I).
	Proto, ImportPaths []string
	// Messages is a streaming call's message count: what a
	// client-streaming call sends, what a server-streaming one asks the
	// echo target for (-p grpc-client-stream, grpc-server-stream).
	Messages int
	// Window is how many ping-pong messages each stream keeps in flight
	// (-p grpc-stream); 0 or 1: one, the reply before the next message.
	// A window is Window Conns on one stream: Streams counts Conns per
	// connection, a multiple of it. It runs on grpc-go's client.
	Window int
	// ZeroRTT sends -p h3's GET and HEAD requests in 0-RTT on resumed
	// sessions (--0rtt); off, no request leaves before its handshake.
	ZeroRTT bool
	// Requests, when set, are a request mix (loadgen run --targets): what
	// is sent over HTTP (http1, h2, h2c), each request picked by the
	// engine. Their URLs share one scheme, host and port, which Target is
	// (scheme://host:port, filled in when empty); Headers go with every
	// one of them, before its own; Method and Body do not apply.
	Requests []Request
	// OKStatus are the HTTP statuses of a successful answer (--ok-status:
	// "2xx", "200,204", "200-299,404"); empty: every status below 400.
	// gRPC's success is its own status, OK, and raw TCP has none: both
	// refuse it.
	OKStatus string
	// Feed is the CSV rows {{row.COLUMN}} takes (--feed). Fields
	// ({{seq}} …: protocol.ParseTemplate) in the URL's path and query,
	// header values and a text body are rendered by -p http1, h2 and h2c.
	Feed *protocol.Feed
}

// WindowStreams is the engine's Conns per connection of a run of streams
// streams per connection (-m) each keeping window ping-pong messages in
// flight (--window, protocol grpc-stream): a message is one of its Conns.
func WindowStreams(protocol string, streams, window int) int {
	if window > 1 && protocol == "grpc-stream" {
		return max(1, streams) * window
	}
	return streams
}

// Request is one request of a mix (Spec.Requests).
type Request struct {
	Method  string
	URL     string
	Headers []string
	Body    []byte
}

// ErrUnreachable wraps the error of a target that could not be reached
// while the Dialer was built (a --call's reflection): a run failure, not
// a mistake in the Spec.
var ErrUnreachable = errors.New("unreachable")

// Protocols lists the protocol names a Spec takes.
func Protocols() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// described are the protocols in the order a reader takes them, each with
// what it is.
var described = [][2]string{
	{"http1", "HTTP/1.1 (http:// or https://)"},
	{"h2", "HTTP/2 over TLS (https://, ALPN h2)"},
	{"h2c", "HTTP/2 without TLS (http://, prior knowledge)"},
	{"h3", "HTTP/3 over QUIC (https://, the UDP port of that number; 0-RTT off)"},
	{"grpc", "gRPC unary calls"},
	{"grpc-stream", "gRPC ping-pong streams (--window N: N messages in flight on each)"},
	{"grpc-server-stream", "gRPC server-streaming calls: one message out, a stream back (--messages asks the echo target for that many)"},
	{"grpc-client-stream", "gRPC client-streaming calls: --messages out (default 10), one back"},
	{"tcp-rr", "netperf's TCP_RR, request and response on a kept connection"},
	{"tcp-crr", "TCP_CRR, a new connection per request"},
	{"tcp-stream", "TCP_STREAM, bulk writes"},
	{"udp-rr", "netperf's UDP_RR, a datagram there and one back, loss counted"},
	{"udp-stream", "UDP_STREAM, datagrams one way, loss by the receiver's count"},
}

// Described lists every protocol a Spec takes with what it is ("h2c:
// HTTP/2 without TLS (…)"), in the order a reader takes them: HTTP,
// gRPC, raw TCP, UDP.
func Described() []string {
	out := make([]string, len(described))
	for i, d := range described {
		out[i] = d[0] + ": " + d[1]
	}
	return out
}

// builder builds one protocol's Dialer from a normalized Spec.
type builder func(s *Spec, enter func(func() error) error) (protocol.Dialer, error)

var builders = map[string]builder{
	"http1":              newHTTP1,
	"h2":                 newHTTP2,
	"h2c":                newHTTP2,
	"h3":                 newHTTP3,
	"tcp-rr":             newTCP,
	"tcp-crr":            newTCP,
	"tcp-stream":         newTCP,
	"udp-rr":             newUDP,
	"udp-stream":         newUDP,
	"grpc":               newGRPC,
	"grpc-stream":        newGRPC,
	"grpc-server-stream": newGRPC,
	"grpc-client-stream": newGRPC,
}

// New checks s, completes it with what it implies (the protocol's
// defaults, the scheme, TLS from https://, the resolved --call), and
// returns its Dialer. Record copies what a result keeps of it.
func New(s *Spec) (protocol.Dialer, error) {
	if v := s.TLS.MinVersion; v != 0 && v < tls.VersionTLS12 {
		// Parsed for the sake of a clear message, but no client of
		// loadgen's completes a handshake below 1.2.
		return nil, fmt.Errorf("--tls-version %s: loadgen's clients speak TLS 1.2 and 1.3 only: use 1.2 or 1.3", strings.TrimPrefix(tls.VersionName(v), "TLS "))
	}
	if s.Protocol == "" {
		s.Protocol = "http1"
	}
	b, ok := builders[s.Protocol]
	if !ok {
		return nil, fmt.Errorf("unknown protocol %q: use one of %s", s.Protocol, strings.Join(Protocols(), ", "))
	}
	if err := checkClient(s.Protocol, s.Client); err != nil {
		return nil, err
	}
	switch {
	case s.Call != "" && !isGRPC(s.Protocol):
		return nil, fmt.Errorf("--call names a gRPC method: use it with -p grpc, grpc-stream, grpc-server-stream or grpc-client-stream")
	case s.Call == "" && (s.Data != "" || s.Protoset != "" || len(s.Proto) > 0 || len(s.ImportPaths) > 0):
		return nil, fmt.Errorf("--data, --protoset, --proto and --import-path describe a --call: give the method with --call pkg.Service/Method")
	case s.Messages != 0 && s.Protocol != "grpc-server-stream" && s.Protocol != "grpc-client-stream":
		return nil, fmt.Errorf("--messages counts a streaming call's messages: use it with -p grpc-server-stream or grpc-client-stream, not -p %s", s.Protocol)
	case s.ZeroRTT && s.Protocol != "h3":
		return nil, fmt.Errorf("--0rtt sends requests in QUIC's 0-RTT: use it with -p h3, not -p %s", s.Protocol)
	case s.Window != 0 && s.Protocol != "grpc-stream":
		return nil, fmt.Errorf("--window keeps ping-pong messages in flight on a stream: use it with -p grpc-stream, not -p %s", s.Protocol)
	}
	if s.Client == "loadgen" {
		s.Client = ""
	}
	if origins := s.mixOrigins(); len(origins) > 1 {
		return s.newHosts(origins)
	}
	if err := s.checkMix(); err != nil {
		return nil, err
	}
	if err := s.checkFields(); err != nil {
		return nil, err
	}
	if s.OKStatus != "" && s.Protocol != "http1" && s.Protocol != "h2" && s.Protocol != "h2c" && s.Protocol != "h3" {
		return nil, fmt.Errorf("--ok-status names HTTP statuses: -p %s has none of its own (gRPC's success is its status OK; an HTTP status without one is mapped to a gRPC code and fails), use it with -p http1, h2, h2c or h3", s.Protocol)
	}
	if s.NetNS == "" {
		return b(s, nil)
	}
	if err := literalHost(s.Target); err != nil {
		return nil, err
	}
	ns, err := netns.Open(s.NetNS)
	if err != nil {
		return nil, err
	}
	d, err := b(s, ns.Do)
	if err != nil {
		ns.Close()
		return nil, err
	}
	return netns.Wrap(ns, d), nil
}

// Record copies into c what a result records of the Spec New completed.
func (s *Spec) Record(c *results.Config) {
	c.Target, c.Protocol, c.Method, c.Headers = s.Target, s.Protocol, s.Method, s.Headers
	c.BodyBytes, c.Size, c.Streams = len(s.Body), s.Size, s.Streams
	c.TLS, c.NetNS, c.Client, c.Call = s.TLS.Enabled, s.NetNS, s.Client, s.Call
	c.OKStatus = s.OKStatus
	c.Messages, c.Window, c.ZeroRTT = s.Messages, s.Window, s.ZeroRTT
	if s.Feed != nil {
		c.Feed = s.Feed.Name
	}
}

// checkMix checks a request mix against the rest of the Spec, and makes
// Target the origin its requests share when it is not given.
func (s *Spec) checkMix() error {
	if len(s.Requests) == 0 {
		return nil
	}
	switch {
	case s.Protocol != "http1" && s.Protocol != "h2" && s.Protocol != "h2c":
		return fmt.Errorf("a request mix (--targets) is of HTTP requests: use -p http1, h2 or h2c, not -p %s", s.Protocol)
	case s.Client != "":
		return fmt.Errorf("--client %s sends one request: a request mix (--targets) needs loadgen's own client", s.Client)
	}
	if err := CheckMixRequest(s.Method, len(s.Body) > 0); err != nil {
		return err
	}
	first, err := TargetURL(s.Requests[0].URL)
	if err != nil {
		return fmt.Errorf("request 1: %w", err)
	}
	origin := first.Scheme + "://" + first.Host
	if s.Target == "" {
		s.Target = origin
	}
	return nil
}

// checkFields refuses fields ({{seq}} …) where they are not rendered:
// loadgen's HTTP/1.1 client renders them; the others send what is built
// once.
func (s *Spec) checkFields() error {
	texts := append([]string{s.Target}, s.Headers...)
	fields := protocol.BodyHasTemplate(s.Body)
	for _, r := range s.Requests {
		texts = append(texts, r.URL)
		texts = append(texts, r.Headers...)
		fields = fields || protocol.BodyHasTemplate(r.Body)
	}
	fields = fields || slices.ContainsFunc(texts, protocol.HasTemplate)
	rest := s.Target
	if _, r, ok := strings.Cut(s.Target, "://"); ok {
		rest = r
	}
	if i := strings.Index(rest, "{{"); i >= 0 && i < strings.IndexAny(rest+"/", "/?#") {
		return fmt.Errorf("URL %q: a field in the host: the requests of a run share one connection pool (one scheme, host and port); fields go in the path and query", s.Target)
	}
	http := s.Protocol == "http1" || s.Protocol == "h2" || s.Protocol == "h2c"
	switch {
	case fields && !http:
		return fmt.Errorf("-p %s sends every request built once: fields ({{seq}}, {{row.COLUMN}} …) in the URL, headers or body are for -p http1, h2 and h2c", s.Protocol)
	case fields && s.Client != "":
		return fmt.Errorf("--client %s sends one request built once: fields ({{seq}} …) need loadgen's own client", s.Client)
	case s.Feed != nil && !http:
		return fmt.Errorf("--feed gives rows to {{row.COLUMN}} fields, which -p http1, h2 and h2c render, not -p %s", s.Protocol)
	}
	return nil
}

// literalHost refuses a target named by a host name for --netns: Go
// resolves names (and races IPv4 against IPv6) on goroutines of its own,
// outside the namespace, so the name would be resolved with the host's
// resolver and routes, not the namespace's.
func literalHost(target string) error {
	host := target
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if net.ParseIP(host) == nil {
		return fmt.Errorf("--netns needs the target as an IP address, not %q: host names would be resolved outside the namespace (look it up inside with: ip netns exec NS getent hosts %s)", host, host)
	}
	return nil
}

// WithScheme gives an HTTP target typed as host:port[/path] — as wrk users
// type it — the http:// it lacks; any other string is returned unchanged.
func WithScheme(target string) string {
	if strings.Contains(target, "://") {
		return target
	}
	hp, _, _ := strings.Cut(target, "/")
	if _, port, err := net.SplitHostPort(hp); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err == nil {
			return "http://" + target
		}
	}
	return target
}

// CheckTarget checks an HTTP target as typed (protocol proto), before its Dialer is built:
// host:port/path with a numeric port gets its http:// even when the port
// is out of range, so that the port is what the error names (not a URL
// parse error about a colon), and a URL without a host name
// (http://:8080/) is refused instead of dialed on this machine. Beside
// WithScheme, which adds http:// only to a port in range.
func CheckTarget(proto, target string) (string, error) {
	switch proto {
	case "", "http1", "h2", "h2c", "h3":
	default:
		return target, nil // host:port, checked by the protocol
	}
	if !strings.Contains(target, "://") {
		hp, _, _ := strings.Cut(target, "/")
		if _, port, err := net.SplitHostPort(hp); err == nil && port != "" && strings.Trim(port, "0123456789") == "" {
			target = "http://" + target
		}
	}
	if u, err := url.Parse(target); err == nil && u.Host != "" && u.Hostname() == "" {
		return "", fmt.Errorf("URL %q has no host name: give one, e.g. %s://127.0.0.1%s/", target, u.Scheme, u.Host)
	}
	return target, nil
}

// TargetURL parses and checks an http(s) target URL.
func TargetURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("malformed URL %q: %v", s, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("malformed URL %q: want scheme://host:port/path, e.g. http://127.0.0.1:8080/get", s)
	}
	return u, nil
}
