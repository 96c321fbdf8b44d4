package h2

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// Dialer opens HTTP/2 connections and hands out streams on them: every
// Streams consecutive Dials share one connection.
type Dialer struct {
	t       *target
	tlsConf *tls.Config // nil for h2c
	blocks  h2wire.RequestBlocks
	opened  atomic.Int64
	conns   sharer[*conn]
}

var (
	_ protocol.Dialer      = (*Dialer)(nil)
	_ protocol.ConnCounter = (*Dialer)(nil)
)

// NewDialer validates cfg and prepares the request.
func NewDialer(cfg Config) (*Dialer, error) {
	t, err := cfg.request()
	if err != nil {
		return nil, err
	}
	d := &Dialer{t: t, blocks: h2wire.EncodeRequest(t.fields, h2wire.DefaultTableSize)}
	if d.tlsConf, err = cfg.tlsConfig(t); err != nil {
		return nil, err
	}
	d.conns = sharer[*conn]{addr: t.addr, streams: t.streams, connect: d.connect}
	return d, nil
}

// Opened reports how many TCP connections were opened.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// Dial returns a stream on the current connection, opening a connection
// when the current one has its Streams streams or is unusable.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) { return d.conns.dial(ctx) }

// connect opens one connection: TCP, TLS with ALPN h2 (or nothing for h2c),
// and the exchange of SETTINGS.
func (d *Dialer) connect(ctx context.Context, pending *atomic.Int32) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.t.dialTimeout)
	defer cancel()
	raw, err := d.t.dialTCP(ctx, &d.opened)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*conn, error) {
		raw.Close()
		return nil, err
	}
	nc, err := d.t.clientTLS(ctx, raw, d.tlsConf)
	if err != nil {
		return fail(err)
	}

	// The SETTINGS exchange is bounded by ctx too.
	dl, _ := ctx.Deadline()
	raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	c := newConn(d, pending, raw, nc)
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
