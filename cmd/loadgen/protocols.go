package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/netns"
	"loadgen/loadgen/protocol/rpc"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/loadgen/sweep"
)

// dialerFor builds a Dialer for one -p value from the run's flags.
type dialerFor func(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error)

var protocols = map[string]dialerFor{
	"http1":       newHTTP1,
	"h2":          newHTTP2,
	"h2c":         newHTTP2,
	"tcp-rr":      newTCP,
	"tcp-crr":     newTCP,
	"tcp-stream":  newTCP,
	"grpc":        newGRPC,
	"grpc-stream": newGRPC,
}

func protocolNames() []string {
	names := make([]string, 0, len(protocols))
	for n := range protocols {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newDialer(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	name := f.protocol
	if name == "" {
		name = "http1"
	}
	p, ok := protocols[name]
	if !ok {
		return nil, fmt.Errorf("unknown protocol %q: use one of %s", name, strings.Join(protocolNames(), ", "))
	}
	cfg.Protocol = name
	cfg.BodyBytes = len(body)
	if err := checkClient(name, f.client); err != nil {
		return nil, err
	}
	switch {
	case f.call != "" && name != "grpc" && name != "grpc-stream":
		return nil, fmt.Errorf("--call names a gRPC method: use it with -p grpc or -p grpc-stream")
	case f.call == "" && (f.data != "" || f.protoset != ""):
		return nil, fmt.Errorf("--data and --protoset describe a --call: give the method with --call pkg.Service/Method")
	}
	if f.client != "" && f.client != "loadgen" {
		cfg.Client = f.client
	}
	if f.netns == "" {
		return p(f, cfg, body)
	}
	if err := literalHost(cfg.Target); err != nil {
		return nil, err
	}
	ns, err := netns.Open(f.netns)
	if err != nil {
		return nil, err
	}
	f.enter = ns.Do
	d, err := p(f, cfg, body)
	if err != nil {
		ns.Close()
		return nil, err
	}
	cfg.NetNS = f.netns
	return netns.Wrap(ns, d), nil
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

// httpTarget checks an http(s) URL and fills the config's method and TLS.
func httpTarget(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.TLS, error) {
	cfg.Target = sweep.WithScheme(cfg.Target)
	u, err := targetURL(cfg.Target)
	if err != nil {
		return protocol.TLS{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return protocol.TLS{}, fmt.Errorf("unsupported scheme %q in %s: -p %s takes http:// or https:// URLs", u.Scheme, cfg.Target, cfg.Protocol)
	}
	if f.size != 0 || f.health {
		return protocol.TLS{}, fmt.Errorf("--size and --health apply to grpc and tcp: over HTTP ask httpbin for /bytes/N, or send --body")
	}
	tlsOpt, err := f.tls.options(u.Scheme == "https")
	if err != nil {
		return tlsOpt, err
	}
	cfg.TLS = tlsOpt.Enabled
	method := f.method
	if method == "" {
		method = "GET"
		if len(body) > 0 {
			method = "POST"
		}
	}
	cfg.Method = strings.ToUpper(method)
	return tlsOpt, nil
}

func newHTTP2(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	tlsOpt, err := httpTarget(f, cfg, body)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Protocol == "h2" && !tlsOpt.Enabled:
		return nil, fmt.Errorf("-p h2 is HTTP/2 over TLS: use an https:// URL, or -p h2c for cleartext")
	case cfg.Protocol == "h2c" && tlsOpt.Enabled:
		return nil, fmt.Errorf("-p h2c is cleartext HTTP/2: use an http:// URL, or -p h2 for TLS")
	}
	if cfg.Streams == 0 {
		cfg.Streams = 1
	}
	c := h2.Config{
		URL: cfg.Target, Method: cfg.Method, Headers: cfg.Headers, Body: body, TLS: tlsOpt,
		Cleartext: cfg.Protocol == "h2c", Streams: cfg.Streams, DialTimeout: cfg.Timeout.D(),
	}
	if cfg.Client == "x-net" {
		return h2.NewLibraryDialer(c)
	}
	return h2.NewDialer(c)
}

func newHTTP1(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	if cfg.Streams > 1 {
		return nil, fmt.Errorf("HTTP/1.1 has one request in flight per connection: --streams needs -p h2 or h2c")
	}
	tlsOpt, err := httpTarget(f, cfg, body)
	if err != nil {
		return nil, err
	}
	return http1.NewDialer(http1.Config{
		URL:         cfg.Target,
		Method:      cfg.Method,
		Headers:     cfg.Headers,
		Body:        body,
		TLS:         tlsOpt,
		DialTimeout: cfg.Timeout.D(),
	})
}

// hostPort accepts host:port or a URL with a host (tcp://host:port).
func hostPort(target string) (string, error) {
	if strings.Contains(target, "://") {
		u, err := targetURL(target)
		if err != nil {
			return "", err
		}
		return u.Host, nil
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		return "", fmt.Errorf("target %q: want host:port, e.g. 127.0.0.1:9000", target)
	}
	return target, nil
}

func newTCP(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	addr, err := hostPort(cfg.Target)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 || f.method != "" || len(cfg.Headers) > 0 {
		return nil, fmt.Errorf("-p %s sends raw bytes: --body, -m and -H do not apply; use --size", cfg.Protocol)
	}
	if f.tls.enable {
		return nil, fmt.Errorf("-p %s is plaintext TCP: --tls does not apply", cfg.Protocol)
	}
	if cfg.Size == 0 {
		cfg.Size = tcp.DefaultSize
	}
	return tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.Mode(cfg.Protocol), Size: cfg.Size, DialTimeout: cfg.Timeout.D(), Enter: f.enter})
}

func newGRPC(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	addr, err := hostPort(cfg.Target)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 || f.method != "" {
		return nil, fmt.Errorf("-p %s sends --size bytes of payload: --body and -m METHOD do not apply", cfg.Protocol)
	}
	if f.health && cfg.Protocol != "grpc" {
		return nil, fmt.Errorf("--health calls grpc.health.v1.Health/Check, a unary call: use -p grpc")
	}
	if f.health && cfg.Size > 0 {
		return nil, fmt.Errorf("--health sends an empty health check: --size does not apply")
	}
	if f.call != "" && (f.health || cfg.Size > 0) {
		return nil, fmt.Errorf("--call sends the --data message: --health and --size apply to loadgen's echo target")
	}
	tlsOpt, err := f.tls.options(strings.HasPrefix(cfg.Target, "https://"))
	if err != nil {
		return nil, err
	}
	cfg.TLS = tlsOpt.Enabled
	if cfg.Streams == 0 {
		cfg.Streams = 1
	}
	c := rpc.Config{
		Target: addr, Mode: rpc.Mode(cfg.Protocol), Size: cfg.Size, Streams: cfg.Streams,
		Connections: cfg.Connections, TLS: tlsOpt, Metadata: cfg.Headers, DialTimeout: cfg.Timeout.D(), Health: f.health,
	}
	if f.call != "" {
		data, err := callData(f.data)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout.D())
		defer cancel()
		if c.Call, c.Message, err = rpc.ResolveCall(ctx, c, f.call, data, f.protoset); err != nil {
			if errors.Is(err, rpc.ErrUnreachable) {
				return nil, failf("cannot connect to %s: %v", cfg.Target, err)
			}
			return nil, err
		}
		cfg.Call = c.Call
	}
	if cfg.Client == "grpc-go" {
		return rpc.NewLibraryDialer(c)
	}
	return rpc.NewDialer(c)
}

// referenceClients are the libraries --client can put under a protocol
// instead of loadgen's own client, to cross-check it.
var referenceClients = map[string][]string{
	"x-net":   {"h2", "h2c"},
	"grpc-go": {"grpc", "grpc-stream"},
}

func checkClient(protocol, client string) error {
	if client == "" || client == "loadgen" {
		return nil
	}
	protos, ok := referenceClients[client]
	if !ok {
		return fmt.Errorf("--client %q: use loadgen, x-net (for -p h2, h2c) or grpc-go (for -p grpc, grpc-stream)", client)
	}
	if !slices.Contains(protos, protocol) {
		return fmt.Errorf("--client %s drives -p %s, not -p %s", client, strings.Join(protos, " or "), protocol)
	}
	return nil
}

// callData is --data: JSON, or @FILE to read it from a file.
func callData(s string) (string, error) {
	if name, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("--data: %w", err)
		}
		return string(b), nil
	}
	return s, nil
}
