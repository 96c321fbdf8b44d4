package http1

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"loadgen/loadgen/protocol"
)

// Dialer opens HTTP/1.1 connections to one target. It is safe for concurrent
// use; everything it shares with its Conns (the request bytes, the TLS
// configuration) is read-only after NewDialer.
type Dialer struct {
	target  protocol.Target // for the event loop's sockets
	addr    string
	req     []byte
	vary    *varying       // the request compiled, when it has fields
	vars    *protocol.Vars // the values its fields share: one sequence, one feed
	head    bool
	mix     *list       // a request mix (Config.Requests); nil without
	tls     *tls.Config // nil for plain HTTP
	timeout time.Duration
	ok      protocol.StatusSet // the statuses of a success
}

var _ protocol.SessionDialer = (*Dialer)(nil)

// NewDialer validates cfg and builds the request once; every Conn sends
// exactly those bytes.
func NewDialer(cfg Config) (*Dialer, error) {
	t, err := cfg.target()
	if err != nil {
		return nil, err
	}
	d := &Dialer{target: protocol.Target{Addr: t.addr}, addr: t.addr, req: t.req, vary: t.vary, vars: protocol.NewVars(cfg.Feed), head: t.head, mix: t.mix, timeout: cfg.DialTimeout, ok: cfg.OKStatus}
	if t.tls {
		tc := cfg.TLS
		tc.Enabled = true
		if d.tls, err = tc.Config(t.hostname, "http/1.1"); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Dial connects (TCP, then the TLS handshake for https) within ctx and the
// configured DialTimeout. Any error it returns is a connect error;
// certificate errors say which flag fixes them.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	var nd net.Dialer // TCP_NODELAY is Go's default
	raw, err := nd.DialContext(ctx, "tcp", d.target.DialAddr())
	if err != nil {
		return nil, err
	}
	rw := raw
	var fc *protocol.FlightConn
	if d.tls != nil {
		fc = &protocol.FlightConn{Conn: raw}
		tc := tls.Client(fc, d.tls)
		if err := d.handshake(ctx, tc); err != nil {
			raw.Close()
			return nil, err
		}
		fc.Handshaken()
		rw = tc
	}
	c := newConn(raw, rw, d)
	c.fc = fc
	return c, nil
}

// handshake runs tc's TLS handshake within ctx and checks that the server
// speaks HTTP/1.1.
func (d *Dialer) handshake(ctx context.Context, tc *tls.Conn) error {
	if err := tc.HandshakeContext(ctx); err != nil {
		return protocol.HandshakeError(d.addr, d.timeout, err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
		return fmt.Errorf("TLS handshake with %s: server chose ALPN protocol %q, not http/1.1", d.addr, p)
	}
	return nil
}

// Sessions tells whether an event loop can drive the connections as
// Sessions: plain HTTP. Over TLS a loop drives them as a Mux (Open).
func (d *Dialer) Sessions() bool { return d.tls == nil }

// Socket starts a connection for an event loop (see protocol.Target).
func (d *Dialer) Socket() (int, error) { return d.target.Socket() }

// Resolve looks the target's name up once, before a run (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error { return d.target.Resolve(ctx) }

// Session returns the state of one connection an event loop drives.
func (d *Dialer) Session() protocol.Session {
	return &session{req: d.req, vary: d.vary, vars: d.vars, head: d.head, mix: d.mix, ok: &d.ok}
}

// PerRequest is false: connections are kept alive.
func (d *Dialer) PerRequest() bool { return false }
