package http2

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/proto"
	"loadgen/loadgen/proto/h2wire"
)

// Dialer opens HTTP/2 connections and hands out streams on them: every
// Streams consecutive Dials share one connection.
type Dialer struct {
	t       *target
	tlsConf *tls.Config // nil for h2c
	blocks  h2wire.RequestBlocks
	opened  atomic.Int64

	mu    sync.Mutex
	group *dialGroup // the connection being handed out
}

// dialGroup is one connection and the Dials that share it.
type dialGroup struct {
	ready   chan struct{} // closed once c or err is set
	c       *conn
	err     error
	joined  int          // Dials that chose this connection (guarded by Dialer.mu)
	pending atomic.Int32 // of which not attached yet: the connection stays open for them
}

var (
	_ proto.Dialer      = (*Dialer)(nil)
	_ proto.ConnCounter = (*Dialer)(nil)
)

// NewDialer validates cfg and prepares the request.
func NewDialer(cfg Config) (*Dialer, error) {
	t, err := cfg.request()
	if err != nil {
		return nil, err
	}
	d := &Dialer{t: t, blocks: h2wire.EncodeRequest(t.fields, h2wire.DefaultTableSize)}
	if t.tls {
		opts := cfg.TLS
		opts.Enabled = true
		if d.tlsConf, err = opts.Config(t.host, "h2"); err != nil {
			return nil, fmt.Errorf("http2: %w", err)
		}
	}
	return d, nil
}

// Opened reports how many TCP connections were opened.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// Dial returns a stream on the current connection, opening a connection
// when the current one has its Streams streams or is unusable.
func (d *Dialer) Dial(ctx context.Context) (proto.Conn, error) {
	for try := 1; ; try++ {
		s, err := d.dial(ctx)
		if err != errConnGone || ctx.Err() != nil || try == 3 {
			if err == errConnGone {
				err = fmt.Errorf("http2: %s: %w", d.t.addr, err)
			}
			return s, err
		}
		// The connection was closed between joining it and attaching to
		// it (its other streams were closed): join the next one.
	}
}

func (d *Dialer) dial(ctx context.Context) (proto.Conn, error) {
	d.mu.Lock()
	g := d.group
	leader := g == nil || g.joined >= d.t.streams || g.unusable()
	if leader {
		g = &dialGroup{ready: make(chan struct{})}
		d.group = g
	}
	g.joined++
	g.pending.Add(1)
	d.mu.Unlock()
	if leader {
		g.c, g.err = d.connect(ctx, g)
		close(g.ready)
	} else {
		select {
		case <-g.ready:
		case <-ctx.Done():
			g.pending.Add(-1)
			select {
			case <-g.ready: // do not leave the connection open unused
				if g.c != nil {
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
	s, err := g.c.attach()
	if err != nil {
		return nil, err // not a nil *stream in a non-nil proto.Conn
	}
	return s, nil
}

func (g *dialGroup) unusable() bool {
	select {
	case <-g.ready:
		return g.err != nil || g.c.broken.Load()
	default:
		return false // being dialed
	}
}

// connect opens one connection: TCP, TLS with ALPN h2 (or nothing for h2c),
// and the exchange of SETTINGS.
func (d *Dialer) connect(ctx context.Context, g *dialGroup) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.t.dialTimeout)
	defer cancel()
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", d.t.addr)
	if err != nil {
		return nil, fmt.Errorf("http2: %w", err)
	}
	d.opened.Add(1)
	fail := func(err error) (*conn, error) {
		raw.Close()
		return nil, err
	}
	nc := raw
	if d.tlsConf != nil {
		tc := tls.Client(raw, d.tlsConf)
		err := tc.HandshakeContext(ctx)
		if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" || err != nil && strings.Contains(err.Error(), "no application protocol") {
			return fail(fmt.Errorf("http2: %s did not negotiate HTTP/2 (ALPN h2); it may speak only HTTP/1.1: use -p http1", d.t.addr))
		}
		if err != nil {
			return fail(fmt.Errorf("http2: TLS handshake with %s: %w", d.t.addr, proto.ExplainTLS(err)))
		}
		nc = tc
	}

	// The SETTINGS exchange is bounded by ctx too.
	dl, _ := ctx.Deadline()
	raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	c := newConn(d, g, raw, nc)
	err = c.handshake()
	if !stop() || ctx.Err() != nil {
		if err == nil || isTimeout(err) {
			err = ctx.Err()
		}
	}
	if err != nil {
		return fail(d.handshakeError(err))
	}
	raw.SetDeadline(time.Time{})
	return c, nil
}

func (d *Dialer) handshakeError(err error) error {
	switch {
	case errors.Is(err, errNotHTTP2):
		return fmt.Errorf("http2: %s answered in HTTP/1.x to the HTTP/2 preface: it does not speak h2c with prior knowledge; use -p http1", d.t.addr)
	case d.tlsConf == nil && !errors.As(err, new(connError)):
		return fmt.Errorf("http2: %s: no HTTP/2 SETTINGS from the server (%v): it may not speak h2c with prior knowledge; use -p http1", d.t.addr, err)
	}
	return fmt.Errorf("http2: %s: HTTP/2 handshake: %w", d.t.addr, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
