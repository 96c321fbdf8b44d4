package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/h3"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/rpc"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/loadgen/protocol/udp"
)

// tlsFor turns the TLS options on for an https:// target and refuses
// options for a plaintext one.
func tlsFor(s *Spec, https bool) error {
	t := &s.TLS
	t.Enabled = t.Enabled || https
	switch {
	case !t.Enabled && t.ClientCertSet():
		return fmt.Errorf("a client certificate (--cert, --key, --cert-p12) is sent over TLS, and %s is plaintext: use an https:// URL or --tls", s.Target)
	case !t.Enabled && (t.Insecure || t.CAFile != "" || t.ServerName != "" || t.MinVersion != 0 || len(t.Ciphers) > 0 || len(t.Curves) > 0):
		return fmt.Errorf("TLS options given for a plaintext target: use an https:// URL or --tls")
	case t.ClientCertSet():
		if _, err := t.ClientCert(); err != nil {
			return err // before any protocol's dialer: the same message for all
		}
	}
	return nil
}

// httpTarget checks an http(s) target and fills the method and TLS.
func httpTarget(s *Spec) error {
	s.Target = WithScheme(s.Target)
	u, err := TargetURL(s.Target)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("unsupported scheme %q in %s: -p %s takes http:// or https:// URLs", u.Scheme, s.Target, s.Protocol)
	}
	if s.Size != 0 || s.Health {
		return fmt.Errorf("--size and --health apply to grpc and tcp: over HTTP ask httpbin for /bytes/N, or send --body")
	}
	if err := tlsFor(s, u.Scheme == "https"); err != nil {
		return err
	}
	if len(s.Requests) > 0 {
		return nil // each request has its method
	}
	if s.Method == "" {
		s.Method = "GET"
		if len(s.Body) > 0 {
			s.Method = "POST"
		}
	}
	s.Method = strings.ToUpper(s.Method)
	return nil
}

func newHTTP1(s *Spec, _ func(func() error) error) (protocol.Dialer, error) {
	if s.Streams > 1 {
		return nil, fmt.Errorf("HTTP/1.1 has one request in flight per connection: --streams needs -p h2 or h2c")
	}
	if err := httpTarget(s); err != nil {
		return nil, err
	}
	ok, err := okStatus(s)
	if err != nil {
		return nil, err
	}
	c := http1.Config{URL: s.Target, Method: s.Method, Headers: s.Headers, Body: s.Body, TLS: s.TLS, DialTimeout: s.Timeout, OKStatus: ok, Feed: s.Feed}
	for _, r := range s.Requests {
		c.Requests = append(c.Requests, http1.Request{Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body})
	}
	return http1.NewDialer(c)
}

func newHTTP2(s *Spec, _ func(func() error) error) (protocol.Dialer, error) {
	if err := httpTarget(s); err != nil {
		return nil, err
	}
	switch {
	case s.Protocol == "h2" && !s.TLS.Enabled:
		return nil, fmt.Errorf("-p h2 is HTTP/2 over TLS: use an https:// URL, or -p h2c for cleartext")
	case s.Protocol == "h2c" && s.TLS.Enabled:
		return nil, fmt.Errorf("-p h2c is cleartext HTTP/2: use an http:// URL, or -p h2 for TLS")
	}
	s.Streams = max(1, s.Streams)
	ok, err := okStatus(s)
	if err != nil {
		return nil, err
	}
	c := h2.Config{URL: s.Target, Method: s.Method, Headers: s.Headers, Body: s.Body, TLS: s.TLS,
		Cleartext: s.Protocol == "h2c", Streams: s.Streams, DialTimeout: s.Timeout, OKStatus: ok, Feed: s.Feed}
	for _, r := range s.Requests {
		c.Requests = append(c.Requests, h2.Request{Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body})
	}
	if s.Client == "x-net" {
		return h2.NewLibraryDialer(c)
	}
	return h2.NewDialer(c)
}

// newHTTP3 needs no enter for --netns: a connection's UDP socket is made
// in Dial, which netns.Wrap runs inside the namespace.
func newHTTP3(s *Spec, _ func(func() error) error) (protocol.Dialer, error) {
	if err := httpTarget(s); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(s.Target, "https://") {
		return nil, fmt.Errorf("-p h3 is HTTP/3 over QUIC, always TLS: use an https:// URL (QUIC goes to the UDP port of its number)")
	}
	s.Streams = max(1, s.Streams)
	ok, err := okStatus(s)
	if err != nil {
		return nil, err
	}
	return h3.NewDialer(h3.Config{URL: s.Target, Method: s.Method, Headers: s.Headers, Body: s.Body, TLS: s.TLS,
		Streams: s.Streams, DialTimeout: s.Timeout, OKStatus: ok, ZeroRTT: s.ZeroRTT})
}

// okStatus reads the Spec's --ok-status, and writes it back as it reads
// it ("200-299,404"), for the result to record.
func okStatus(s *Spec) (protocol.StatusSet, error) {
	if s.OKStatus == "" {
		return protocol.StatusSet{}, nil
	}
	ok, err := protocol.ParseStatusSet(s.OKStatus)
	if err != nil {
		return ok, err
	}
	s.OKStatus = ok.String()
	return ok, nil
}

// hostPort accepts host:port or a URL with a host (tcp://host:port).
func hostPort(target string) (string, error) {
	if strings.Contains(target, "://") {
		u, err := TargetURL(target)
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

func newTCP(s *Spec, enter func(func() error) error) (protocol.Dialer, error) {
	addr, err := hostPort(s.Target)
	if err != nil {
		return nil, err
	}
	if len(s.Body) > 0 || s.Method != "" || len(s.Headers) > 0 {
		return nil, fmt.Errorf("-p %s sends raw bytes: --body, -m and -H do not apply; use --size", s.Protocol)
	}
	if s.TLS.Enabled {
		return nil, fmt.Errorf("-p %s is plaintext TCP: --tls does not apply", s.Protocol)
	}
	if err := tlsFor(s, false); err != nil {
		return nil, err
	}
	if s.Size == 0 {
		s.Size = tcp.DefaultSize
	}
	return tcp.NewDialer(tcp.Config{Addr: addr, Mode: tcp.Mode(s.Protocol), Size: s.Size, DialTimeout: s.Timeout, Enter: enter})
}

func newUDP(s *Spec, enter func(func() error) error) (protocol.Dialer, error) {
	addr, err := hostPort(s.Target)
	if err != nil {
		return nil, err
	}
	switch {
	case len(s.Body) > 0 || s.Method != "" || len(s.Headers) > 0:
		return nil, fmt.Errorf("-p %s sends datagrams of raw bytes: --body, -m and -H do not apply; use --size", s.Protocol)
	case s.TLS.Enabled:
		return nil, fmt.Errorf("-p %s is plaintext UDP: --tls does not apply", s.Protocol)
	case s.Streams > 1:
		return nil, fmt.Errorf("-p %s keeps one datagram in flight per connection: --streams does not apply; use -c for more", s.Protocol)
	case s.Size > udp.MaxSize:
		return nil, fmt.Errorf("--size %d: a UDP datagram carries at most %d bytes", s.Size, udp.MaxSize)
	}
	if err := tlsFor(s, false); err != nil {
		return nil, err
	}
	if s.Size == 0 {
		s.Size = udp.DefaultSize
	}
	return udp.NewDialer(udp.Config{Addr: addr, Mode: udp.Mode(s.Protocol), Size: s.Size, DialTimeout: s.Timeout, Enter: enter})
}

func newGRPC(s *Spec, _ func(func() error) error) (protocol.Dialer, error) {
	addr, err := hostPort(s.Target)
	if err != nil {
		return nil, err
	}
	switch {
	case len(s.Body) > 0 || s.Method != "":
		return nil, fmt.Errorf("-p %s sends --size bytes of payload: --body and -m METHOD do not apply", s.Protocol)
	case s.Health && s.Protocol != "grpc":
		return nil, fmt.Errorf("--health calls grpc.health.v1.Health/Check, a unary call: use -p grpc")
	case s.Health && s.Size > 0:
		return nil, fmt.Errorf("--health sends an empty health check: --size does not apply")
	case s.Call != "" && (s.Health || s.Size > 0):
		return nil, fmt.Errorf("--call sends the --data message: --health and --size apply to loadgen's echo target")
	}
	if err := tlsFor(s, strings.HasPrefix(s.Target, "https://")); err != nil {
		return nil, err
	}
	s.Streams = max(1, s.Streams)
	c := rpc.Config{
		Target: addr, Mode: rpc.Mode(s.Protocol), Size: s.Size, Streams: s.Streams,
		Connections: s.Connections, TLS: s.TLS, Metadata: s.Headers, DialTimeout: s.Timeout, Health: s.Health,
		Messages: s.Messages, Window: s.Window,
	}
	if s.Window > 1 {
		s.Client = "grpc-go" // the lean client keeps one message in flight per stream
	}
	if c.Mode == rpc.ClientStream || (c.Mode == rpc.ServerStream && s.Call == "") {
		c.Messages = cmp.Or(c.Messages, rpc.DefaultMessages)
		s.Messages = c.Messages // as recorded
	}
	if s.Call != "" {
		data, err := callData(s.Data)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
		defer cancel()
		if c.Call, c.Message, err = rpc.ResolveCall(ctx, c, s.Call, data, rpc.Types{Protoset: s.Protoset, Proto: s.Proto, ImportPaths: s.ImportPaths}); err != nil {
			if errors.Is(err, rpc.ErrUnreachable) {
				return nil, fmt.Errorf("cannot connect to %s: %w: %w", s.Target, ErrUnreachable, err)
			}
			return nil, err
		}
		s.Call = c.Call
	}
	if s.Client == "grpc-go" {
		return rpc.NewLibraryDialer(c)
	}
	return rpc.NewDialer(c)
}

// isGRPC tells the gRPC protocols.
func isGRPC(p string) bool { return strings.HasPrefix(p, "grpc") }

// referenceClients are the libraries Spec.Client can put under a protocol
// instead of loadgen's own client, to cross-check it.
var referenceClients = map[string][]string{
	"x-net":   {"h2", "h2c"},
	"grpc-go": {"grpc", "grpc-stream"},
}

func checkClient(proto, client string) error {
	if client == "" || client == "loadgen" {
		return nil
	}
	protos, ok := referenceClients[client]
	if !ok {
		return fmt.Errorf("--client %q: use loadgen, x-net (for -p h2, h2c) or grpc-go (for -p grpc, grpc-stream)", client)
	}
	if !slices.Contains(protos, proto) {
		return fmt.Errorf("--client %s drives -p %s, not -p %s", client, strings.Join(protos, " or "), proto)
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
