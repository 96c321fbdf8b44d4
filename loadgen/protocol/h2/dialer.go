package h2

import (
	"context"
	"errors"
	"fmt"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// Dialer opens HTTP/2 connections and hands out streams on them: every
// Streams consecutive Dials share one connection (h2conn does the
// connection's work).
type Dialer struct {
	t    *target
	core *h2conn.Dialer
	sock protocol.Target // for the event loop's sockets (h2c)
	vars *protocol.Vars  // the values fields share: one sequence, one feed
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
	tlsConf, err := cfg.tlsConfig(t)
	if err != nil {
		return nil, err
	}
	d := &Dialer{t: t, sock: protocol.Target{Addr: t.addr}, vars: protocol.NewVars(cfg.Feed)}
	d.core = h2conn.NewDialer(h2conn.Config{
		Name:        "http2",
		Addr:        t.addr,
		Dest:        &d.sock,
		TLS:         tlsConf,
		DialTimeout: t.dialTimeout,
		Streams:     t.streams,
		Fields:      t.fields,
		Requests:    t.lists,
		Vary:        t.vary,
	})
	return d, nil
}

// Resolve looks the target's name up once, before a run (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error { return d.sock.Resolve(ctx) }

// Opened reports how many HTTP/2 connections were established.
func (d *Dialer) Opened() int64 { return d.core.Opened() }

// Dial returns a stream on the current connection, opening a connection
// when the current one has its Streams streams or is unusable.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	s, err := d.core.Dial(ctx, nil)
	if err != nil {
		return nil, d.explain(err)
	}
	c := &stream{s: s, body: d.t.body, bodies: d.t.bodies, ok: &d.t.ok, renders: d.t.renders, vars: d.vars}
	if c.renders != nil {
		c.render = c.renders[0]
	}
	return c, nil
}

// explain says why a connection could not be opened, in what to do.
func (d *Dialer) explain(err error) error {
	var de *h2conn.DialError
	if !errors.As(err, &de) {
		return err
	}
	addr := d.t.addr
	switch {
	case de.Stage == h2conn.StageTCP:
		return fmt.Errorf("http2: %w", de.Err)
	case de.Stage == h2conn.StageTLS:
		return fmt.Errorf("http2: %w", protocol.HandshakeError(addr, d.t.dialTimeout, de.Err))
	case de.Stage == h2conn.StageALPN:
		return fmt.Errorf("http2: %s did not negotiate HTTP/2 (ALPN h2); it may speak only HTTP/1.1: use -p http1", addr)
	case de.HTTP1():
		return fmt.Errorf("http2: %s answered in HTTP/1.x to the HTTP/2 preface: it does not speak h2c with prior knowledge; use -p http1", addr)
	case !d.t.tls && !de.Protocol && protocol.TextHead(de.Head) != "":
		return fmt.Errorf("http2: %s answered %s to the HTTP/2 preface: the server answered HTTP/1.1, not HTTP/2; it does not speak h2c with prior knowledge: use -p http1", addr, protocol.TextHead(de.Head))
	case !d.t.tls && !de.Protocol:
		why := fmt.Sprintf("first bytes % x", de.Head)
		if de.Err != nil {
			why = de.Err.Error()
		}
		return fmt.Errorf("http2: %s: no HTTP/2 SETTINGS from the server (%s): it may not speak h2c with prior knowledge; use -p http1", addr, why)
	}
	return fmt.Errorf("http2: %s: HTTP/2 handshake: %w", addr, de)
}
