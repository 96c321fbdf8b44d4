package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"loadgen/loadgen/protocol"
)

// keepAlive is how often an idle QUIC connection sends a PING, so that a
// connection an open-loop run leaves idle for a while is not closed by
// QUIC's idle timeout (30 s by default) under it.
const keepAlive = 10 * time.Second

// Dialer opens QUIC connections and hands out Conns on them: every
// Streams consecutive Dials share one connection.
type Dialer struct {
	t      *target
	tls    *tls.Config
	qc     *quic.Config
	tr     *http3.Transport // only for NewClientConn's settings
	sock   protocol.Target
	opened atomic.Int64
	// rejected is set once a server rejected 0-RTT; connections after do
	// without it.
	rejected atomic.Bool

	mu  sync.Mutex
	cur *qconn // the connection Dials hand out, nil for a new one
}

var (
	_ protocol.Dialer      = (*Dialer)(nil)
	_ protocol.ConnCounter = (*Dialer)(nil)
	_ protocol.Resolver    = (*Dialer)(nil)
)

// NewDialer validates cfg and prepares the request.
func NewDialer(cfg Config) (*Dialer, error) {
	t, err := cfg.target()
	if err != nil {
		return nil, err
	}
	o := cfg.TLS
	o.Enabled = true
	o.Resume = o.Resume || cfg.ZeroRTT // 0-RTT needs a resumed session
	if o.MaxVersion != 0 && o.MaxVersion < tls.VersionTLS13 {
		return nil, errors.New("http3: QUIC needs TLS 1.3: leave out --tls-version or give 1.3")
	}
	tc, err := o.Config(t.host, http3.NextProtoH3)
	if err != nil {
		return nil, err
	}
	tc.MinVersion = tls.VersionTLS13
	return &Dialer{
		t:    t,
		tls:  tc,
		qc:   &quic.Config{HandshakeIdleTimeout: t.dialTimeout, KeepAlivePeriod: keepAlive},
		tr:   &http3.Transport{DisableCompression: true},
		sock: protocol.Target{Addr: t.addr},
	}, nil
}

// Resolve looks the target's name up once, before a run (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error { return d.sock.Resolve(ctx) }

// Opened reports how many QUIC connections completed their handshake.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// qconn is one QUIC connection and the Conns on it.
type qconn struct {
	ready chan struct{} // closed once the dial ended; err, conn and cc are set then
	err   error
	conn  *quic.Conn
	cc    *http3.ClientConn
	udp   *net.UDPConn
	dead  atomic.Bool // a Conn found it unable to carry another request
	early bool        // dialed for 0-RTT: its requests may go before the handshake completed

	// under Dialer.mu
	handed int // Dials handed out on it
	refs   int // of them not yet closed
}

// usable tells whether a Dial may hand out a Conn on c (under Dialer.mu).
func (c *qconn) usable(streams int) bool {
	if c.handed >= streams || c.dead.Load() {
		return false
	}
	select {
	case <-c.ready:
		return c.err == nil && c.conn.Context().Err() == nil
	default:
		return true // being dialed
	}
}

// Dial returns a Conn on the current connection, opening a connection when
// the current one has its Streams Conns or is unusable.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	d.mu.Lock()
	c := d.cur
	opener := c == nil || !c.usable(d.t.streams)
	if opener {
		c = &qconn{ready: make(chan struct{})}
		d.cur = c
	}
	c.handed++
	c.refs++
	d.mu.Unlock()
	if opener {
		c.err = d.open(ctx, c)
		close(c.ready)
	} else {
		select {
		case <-c.ready:
		case <-ctx.Done():
			d.release(c)
			return nil, ctx.Err()
		}
	}
	if c.err != nil {
		d.release(c)
		return nil, c.err
	}
	s := &stream{d: d, c: c}
	s.abort, s.cancel = context.WithCancel(context.Background())
	s.trace = &httptrace.ClientTrace{WroteHeaders: func() { s.wrote.Store(true) }}
	return s, nil
}

// open dials c's QUIC connection, on a UDP socket of its own.
func (d *Dialer) open(ctx context.Context, c *qconn) error {
	ctx, cancel := context.WithTimeout(ctx, d.t.dialTimeout)
	defer cancel()
	addr, err := net.ResolveUDPAddr("udp", d.sock.DialAddr())
	if err != nil {
		return fmt.Errorf("http3: %w", err)
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return fmt.Errorf("http3: %w", err)
	}
	dialQUIC := quic.Dial
	if c.early = d.t.early != nil && !d.rejected.Load(); c.early {
		dialQUIC = quic.DialEarly
	}
	conn, err := dialQUIC(ctx, udp, addr, d.tls, d.qc)
	if err != nil {
		udp.Close()
		return d.explain(err)
	}
	d.opened.Add(1)
	c.conn, c.udp = conn, udp
	c.cc = d.tr.NewClientConn(conn)
	return nil
}

// release drops one Conn of c; the last one closes the connection.
func (d *Dialer) release(c *qconn) {
	d.mu.Lock()
	c.refs--
	last := c.refs == 0
	if last && d.cur == c {
		d.cur = nil
	}
	d.mu.Unlock()
	if !last {
		return
	}
	<-c.ready
	if c.conn != nil {
		c.conn.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
		c.udp.Close()
	}
}

// noApplicationProtocol is TLS's no_application_protocol alert as a QUIC
// transport error (RFC 9001 §4.8: 0x100 + the alert).
const noApplicationProtocol = quic.TransportErrorCode(0x100 + 120)

// explain says why a connection could not be opened, in what to do.
func (d *Dialer) explain(err error) error {
	addr := d.t.addr
	var te *quic.TransportError
	var hs *quic.HandshakeTimeoutError
	var idle *quic.IdleTimeoutError
	switch {
	case errors.As(err, &hs), errors.As(err, &idle), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("http3: no QUIC answer from %s (UDP) within %v (--timeout): it does not speak HTTP/3 on that port; if it serves HTTP/2 or HTTP/1.1 over TCP, use -p h2 or -p http1", addr, d.t.dialTimeout)
	case errors.As(err, &te) && te.ErrorCode == noApplicationProtocol:
		return fmt.Errorf("http3: %s speaks QUIC but did not negotiate HTTP/3 (ALPN h3)", addr)
	case errors.As(err, &te) && te.ErrorCode.IsCryptoError():
		return fmt.Errorf("http3: TLS handshake with %s: %w", addr, protocol.ExplainTLS(err))
	}
	return fmt.Errorf("http3: %s: %w", addr, err)
}
