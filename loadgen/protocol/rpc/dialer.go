package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"sync/atomic"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// maxMessage bounds a message: a body of MaxSize and its tags.
const maxMessage = MaxSize + 64

// Dialer hands out Conns, Config.Streams of them per HTTP/2 connection:
// Dials 1…m share the first connection, m+1…2m the second, and so on. A
// connection is closed with its last Conn. It is safe for concurrent use.
type Dialer struct {
	s      settings
	tls    *tls.Config // nil for plaintext
	req    []byte      // the request as sent: prefix and message; shared, read-only
	fields []h2wire.Field
	check  replyCheck

	opened atomic.Int64
	conns  connGroup[*transport]
}

var (
	_ protocol.Dialer      = (*Dialer)(nil)
	_ protocol.ConnCounter = (*Dialer)(nil)
)

// NewDialer validates cfg and builds the request once.
func NewDialer(cfg Config) (*Dialer, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	d := &Dialer{s: s, req: newRequest(s), check: s.replyCheck()}
	if s.TLS.Enabled {
		if d.tls, err = s.TLS.Config(s.host, "h2"); err != nil {
			return nil, err
		}
	}
	d.fields = requestFields(s, d.tls != nil, s.method())
	d.conns = connGroup[*transport]{
		streams: s.Streams,
		target:  s.Target,
		open:    func() *transport { return newTransport(d) },
		connect: func(ctx context.Context, t *transport) error { return t.connect(ctx) },
		live:    (*transport).usable,
		close:   (*transport).close,
	}
	return d, nil
}

// Opened counts the HTTP/2 connections really established: those whose
// target answered with HTTP/2 settings.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// Dial returns a Conn on the current connection, opening a connection when
// the current one has Streams Conns already or cannot take more, bounded by
// ctx and Config.DialTimeout. In Stream mode it also opens the Conn's
// ping-pong stream. Its errors are one line saying what is wrong: not a
// gRPC server, TLS expected, certificate not trusted …
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.s.DialTimeout)
	defer cancel()
	t, err := d.conns.attach(ctx)
	if err != nil {
		return nil, err
	}
	if d.s.Mode == Stream {
		c, err := newStreamConn(ctx, d, t)
		if errors.Is(err, errGoingAway) { // GOAWAY came meanwhile: once more, elsewhere
			d.conns.release(t, true)
			if t, err = d.conns.attach(ctx); err != nil {
				return nil, err
			}
			c, err = newStreamConn(ctx, d, t)
		}
		if err != nil {
			d.conns.release(t, true)
			return nil, err
		}
		return c, nil
	}
	return newUnaryConn(d, t), nil
}
