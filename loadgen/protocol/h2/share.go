package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"loadgen/loadgen/protocol"
)

// This file is what both clients' Dialers share: how Dials share
// connections (sharer), and the TCP and TLS under HTTP/2.

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

// dialTCP opens a TCP connection to the target, counted in opened.
func (t *target) dialTCP(ctx context.Context, opened *atomic.Int64) (net.Conn, error) {
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("http2: %w", err)
	}
	opened.Add(1)
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
		return nil, fmt.Errorf("http2: TLS handshake with %s: %w", t.addr, protocol.ExplainTLS(err))
	}
	return tc, nil
}

// sharer hands out the streams of a Dialer's connections, for both clients
// (Dialer's conn and libDialer's libConn): every streams consecutive Dials
// share one connection. The first Dial of a connection (its leader) opens
// it; the others wait for it on ready, and attach to it once it is open.
type sharer[C sharedConn] struct {
	addr    string // for errors
	streams int    // Dials per connection
	// connect opens a connection, or returns an error and no connection.
	// pending is the count of the Dials that joined the connection and
	// have not attached to it yet: the connection must stay open while it
	// is not 0, and attach decrements it.
	connect func(ctx context.Context, pending *atomic.Int32) (C, error)

	mu    sync.Mutex
	group *connGroup[C] // the connection being handed out
}

// sharedConn is a connection that Dials share.
type sharedConn interface {
	// attach adds a stream for a Dial that joined the connection, and
	// counts the Dial out of pending. It returns errConnGone, and no
	// stream, if the connection was closed or broke in the meantime.
	attach() (protocol.Conn, error)
	// closeIfUnused closes the connection when no stream uses it or will.
	closeIfUnused()
	// unusable reports that the connection can take no more streams.
	unusable() bool
}

// connGroup is one connection and the Dials that share it.
type connGroup[C sharedConn] struct {
	ready   chan struct{} // closed once c or err is set
	c       C
	err     error
	joined  int          // Dials that chose this connection (guarded by sharer.mu)
	pending atomic.Int32 // of which not attached yet: the connection stays open for them
}

// dial returns a stream on the current connection, opening a connection
// when the current one has its streams streams or is unusable.
func (s *sharer[C]) dial(ctx context.Context) (protocol.Conn, error) {
	for try := 1; ; try++ {
		c, err := s.join(ctx)
		if err != errConnGone || ctx.Err() != nil || try == 3 {
			if err == errConnGone {
				err = fmt.Errorf("http2: %s: %w", s.addr, err)
			}
			return c, err
		}
		// The connection was closed (its other streams were closed) or
		// broke between joining it and attaching to it: join the next one.
	}
}

func (s *sharer[C]) join(ctx context.Context) (protocol.Conn, error) {
	s.mu.Lock()
	g := s.group
	leader := g == nil || g.joined >= s.streams || g.unusable()
	if leader {
		g = &connGroup[C]{ready: make(chan struct{})}
		s.group = g
	}
	g.joined++
	g.pending.Add(1)
	s.mu.Unlock()
	if leader {
		g.c, g.err = s.connect(ctx, &g.pending)
		close(g.ready)
	} else {
		select {
		case <-g.ready:
		case <-ctx.Done():
			g.pending.Add(-1)
			select {
			case <-g.ready: // do not leave the connection open unused
				if g.err == nil {
					g.c.closeIfUnused()
				}
			default: // the leader is still dialing and will attach to it
			}
			return nil, ctx.Err()
		}
	}
	if g.err != nil {
		g.pending.Add(-1)
		return nil, g.err
	}
	return g.c.attach()
}

func (g *connGroup[C]) unusable() bool {
	select {
	case <-g.ready:
		return g.err != nil || g.c.unusable()
	default:
		return false // being dialed
	}
}
