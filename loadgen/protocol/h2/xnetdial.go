package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"loadgen/loadgen/protocol"
)

// This file is the TCP and TLS under x/net's client (the lean one's are
// h2conn's).

// tlsConfig is the TLS configuration, with ALPN h2, of an https:// target;
// nil for h2c.
func (c Config) tlsConfig(t *target) (*tls.Config, error) {
	if !t.tls {
		return nil, nil
	}
	opts := c.TLS
	opts.Enabled = true
	conf, err := opts.Config(t.host, "h2")
	if err != nil {
		return nil, fmt.Errorf("http2: %w", err)
	}
	return conf, nil
}

// dialTCP opens a TCP connection to the target.
func (t *target) dialTCP(ctx context.Context) (net.Conn, error) {
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("http2: %w", err)
	}
	return raw, nil
}

// clientTLS returns nc itself for h2c (conf nil), or the TLS connection over
// nc, which must have negotiated ALPN h2. On an error the caller closes nc.
func (t *target) clientTLS(ctx context.Context, nc net.Conn, conf *tls.Config) (net.Conn, error) {
	if conf == nil {
		return nc, nil
	}
	tc := tls.Client(nc, conf)
	err := tc.HandshakeContext(ctx)
	if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" || err != nil && strings.Contains(err.Error(), "no application protocol") {
		return nil, fmt.Errorf("http2: %s did not negotiate HTTP/2 (ALPN h2); it may speak only HTTP/1.1: use -p http1", t.addr)
	}
	if err != nil {
		return nil, fmt.Errorf("http2: %w", protocol.HandshakeError(t.addr, t.dialTimeout, err))
	}
	return tc, nil
}
