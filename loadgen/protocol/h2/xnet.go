// The reference HTTP/2 client, on golang.org/x/net/http2's ClientConn:
// same Config, dialing and outcome rules as the lean client, to cross-check
// its figures or to see what x/net's behaviour does to a server. It costs
// more generator CPU (x/net allocates per request): compare at one rate,
// not at saturation. Each ClientConn is made on a connection dialed here,
// so x/net opens, pools and retries nothing behind the engine's back.

//lint:file-ignore SA1019 x/net/http2's own ClientConn is the reference the lean client is checked against; net/http's replacement hides the connection it drives

package h2

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// libDialer is NewLibraryDialer's Dialer. Like Dialer, every Streams
// consecutive Dials share one connection.
type libDialer struct {
	t       *target
	tlsConf *tls.Config // nil for h2c
	tr      *http2.Transport
	req     *http.Request // the request without context or body; never sent itself
	opened  atomic.Int64
	conns   h2conn.Group[*libConn]
}

var (
	_ protocol.Dialer      = (*libDialer)(nil)
	_ protocol.ConnCounter = (*libDialer)(nil)
	_ protocol.Conn        = (*libStream)(nil)
)

// NewLibraryDialer is NewDialer on golang.org/x/net/http2's client: the same
// Config, validated the same way, and the same Outcome rules (see the
// package documentation), except:
//
//   - Outcome.Bytes counts the response body only, and Outcome.Written the
//     request body bytes x/net read from it: x/net does not expose frame
//     sizes, and bytes counted on a connection cannot be told apart between
//     the streams that share it;
//   - a Dial ends with a PING round trip, which proves the server speaks
//     HTTP/2 (for h2c, that it takes prior knowledge), as the lean client's
//     wait for the server's SETTINGS does;
//   - a stream reset at its deadline may be followed by a PING (x/net's
//     check that the server still answers), and its slot held until the
//     PING is answered;
//   - x/net sets the flow-control windows and the frame sizes (not h2load's
//     2^30-1 windows), and sends content-length from the body's length, not
//     a Content-Length header given in Config.Headers.
func NewLibraryDialer(cfg Config) (protocol.Dialer, error) {
	if len(cfg.Requests) > 0 {
		return nil, errors.New("http2: the reference client (x-net) sends one request: a request mix needs loadgen's own client")
	}
	t, err := cfg.request()
	if err != nil {
		return nil, err
	}
	d := &libDialer{
		t: t,
		tr: &http2.Transport{
			// Requests past the server's SETTINGS_MAX_CONCURRENT_STREAMS
			// wait for a slot on their connection, as with the lean
			// client, instead of failing: there is no pool to try another.
			StrictMaxConcurrentStreams: true,
			// No "accept-encoding: gzip" the user did not ask for, and no
			// decompression: the body counted is the one the server sent.
			DisableCompression: true,
		},
	}
	if d.tlsConf, err = cfg.tlsConfig(t); err != nil {
		return nil, err
	}
	if d.req, err = libRequest(t, cfg.URL); err != nil {
		return nil, err
	}
	d.conns = h2conn.Group[*libConn]{
		Streams: t.streams,
		Name:    "http2",
		Target:  t.addr,
		Open:    func() *libConn { return &libConn{d: d} },
		Connect: d.connect,
		Live:    (*libConn).usable,
		Close:   (*libConn).close,
	}
	return d, nil
}

// libRequest builds the request from the validated header list, so that
// both clients send the same method, authority and headers.
// RoundTrip must not modify a request (http.RoundTripper's contract): its
// URL and Header are shared read-only by every Do.
func libRequest(t *target, rawURL string) (*http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil { // validated already
		return nil, fmt.Errorf("http2: bad URL %q: %w", rawURL, err)
	}
	req := &http.Request{URL: u, Header: http.Header{}, ContentLength: int64(len(t.body))}
	for _, f := range t.fields {
		switch f.Name {
		case ":method":
			req.Method = f.Value
		case ":authority":
			req.Host = f.Value
		case ":scheme", ":path": // from the URL
		default:
			req.Header.Add(f.Name, f.Value)
		}
	}
	return req, nil
}

// Opened reports how many HTTP/2 connections were established: their
// server answered the Dial's PING.
func (d *libDialer) Opened() int64 { return d.opened.Load() }

// Dial returns a stream on the current connection, opening a connection
// when the current one has its Streams streams or is unusable.
func (d *libDialer) Dial(ctx context.Context) (protocol.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.t.dialTimeout)
	defer cancel()
	for try := 1; ; try++ {
		c, err := d.conns.Attach(ctx)
		if err != nil {
			return nil, err
		}
		if c.usable() {
			return &libStream{c: c}, nil
		}
		// The connection broke between joining it and attaching to it:
		// join the next one.
		d.conns.Release(c, true)
		if try == 3 || ctx.Err() != nil {
			return nil, fmt.Errorf("http2: %s: connection closed before use", d.t.addr)
		}
	}
}

// connect opens c: TCP, TLS with ALPN h2 (or nothing for h2c), x/net's
// ClientConn on it, and a PING answered, all within ctx (the Group's
// Connect).
func (d *libDialer) connect(ctx context.Context, c *libConn) error {
	raw, err := d.t.dialTCP(ctx)
	if err != nil {
		return err
	}
	wc := &watchedConn{Conn: raw}
	nc, err := d.t.clientTLS(ctx, wc, d.tlsConf)
	if err != nil {
		raw.Close()
		return err
	}
	cc, err := d.tr.NewClientConn(nc)
	if err != nil {
		raw.Close()
		return fmt.Errorf("http2: %s: HTTP/2 preface: %w", d.t.addr, err)
	}
	if err := cc.Ping(ctx); err != nil {
		cc.Close()
		if d.tlsConf == nil {
			return fmt.Errorf("http2: %s: no HTTP/2 answer to the preface (%v): it may not speak h2c with prior knowledge (HTTP/1.1 only?); use -p http1", d.t.addr, err)
		}
		return fmt.Errorf("http2: %s: HTTP/2 handshake: %w", d.t.addr, err)
	}
	c.cc, c.nc = cc, wc
	d.opened.Add(1)
	return nil
}

// libConn is one connection, x/net's ClientConn on it, shared by the
// streams dialed onto it (its Group closes it with the last).
type libConn struct {
	h2conn.Member
	d  *libDialer
	cc *http2.ClientConn
	nc *watchedConn
}

// usable reports whether the connection can take another request. With
// StrictMaxConcurrentStreams, x/net's CanTakeNewRequest says no only after
// a GOAWAY or once the connection is closed, except for a connection closed
// before its first request (x/net lets that fail in a request so that a
// pool reports the error): watchedConn catches that case.
//
// This holds for x/net's own client, which Go 1.26 builds. Built with Go
// 1.27 or later, x/net wraps net/http's client, whose CanTakeNewRequest
// also says no while every stream slot is taken: a full shared connection
// would then end its Conns with Done.
func (c *libConn) usable() bool {
	return !c.nc.lost() && c.cc.CanTakeNewRequest()
}

// close closes the connection, with its last stream. Closing a TLS
// connection may wait for its peer (at most 250ms, x/net sees to it).
func (c *libConn) close() {
	if c.cc != nil {
		c.cc.Close()
	}
}

// libStream is a protocol.Conn on a libConn: one request at a time.
type libStream struct {
	c *libConn

	mu     sync.Mutex
	cancel context.CancelFunc // of the Do in progress, for Close
	closed bool
}

// Do sends one request with cc.RoundTrip and reads the whole response.
// Each Do allocates its request, its context and its body reader: an
// http.Request must not be reused while a RoundTrip may still use it, and
// x/net may go on reading the body after RoundTrip has returned.
func (s *libStream) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	c := s.c
	var rctx context.Context
	var cancel context.CancelFunc
	if deadline.IsZero() {
		rctx, cancel = context.WithCancel(ctx)
	} else {
		rctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	s.mu.Lock()
	closed := s.closed
	s.cancel = cancel
	s.mu.Unlock()
	defer s.forget()
	switch {
	case closed:
		return protocol.Outcome{Err: protocol.Read, Done: true}
	case !c.usable():
		return protocol.Outcome{Err: c.nc.failure(protocol.Write), Done: true} // never sent: dial anew
	case ctx.Err() != nil:
		return protocol.Outcome{Err: protocol.Timeout}
	}

	req := c.d.req.WithContext(rctx)
	var body *sentBody
	if len(c.d.t.body) > 0 {
		body = &sentBody{rest: c.d.t.body}
		req.Body = body
	}
	var o protocol.Outcome
	resp, err := c.cc.RoundTrip(req)
	if err == nil {
		o.Status = int32(resp.StatusCode)
		o.Bytes, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if body != nil {
		o.Written = body.n.Load()
	}
	switch {
	case err != nil:
		o.Err = s.errClass(rctx, err)
	case c.d.t.ok.Failed(int(o.Status)):
		o.Err = protocol.Status
	}
	o.Done = s.isClosed() || !c.usable()
	return o
}

// errClass classifies a failed request.
func (s *libStream) errClass(rctx context.Context, err error) protocol.ErrClass {
	var se http2.StreamError
	switch {
	case s.isClosed():
		return protocol.Read // aborted by Close
	case rctx.Err() != nil:
		return protocol.Timeout // the deadline passed, or the run's context ended
	case errors.As(err, &se) && se.Code == http2.ErrCodeProtocol:
		return protocol.Protocol // a malformed response, or the server's RST_STREAM PROTOCOL_ERROR
	case errors.As(err, &se):
		return protocol.Read // RST_STREAM from the server
	case errors.As(err, new(http2.ConnectionError)):
		return protocol.Protocol // the server broke the protocol: x/net closed the connection
	}
	// The connection was lost, or (GOAWAY) the server will not process the
	// request: x/net does not say whether reading or writing failed.
	return s.c.nc.failure(protocol.Read)
}

func (s *libStream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// forget ends a Do: Close no longer has a request to cancel.
func (s *libStream) forget() {
	s.mu.Lock()
	s.cancel = nil
	s.mu.Unlock()
}

// Close cancels the stream's request, if any, and detaches it; the last
// Close of a connection closes it. It may run concurrently with Do, which
// then returns promptly. It is idempotent.
func (s *libStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.c.d.conns.Release(s.c, false)
	return nil
}

// sentBody is a request body that counts the bytes x/net took from it. The
// count is atomic: x/net reads the body in a goroutine of its own, which a
// cancelled request does not wait for.
type sentBody struct {
	rest []byte
	n    atomic.Int64
}

func (b *sentBody) Read(p []byte) (int, error) {
	if len(b.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	b.n.Add(int64(n))
	return n, nil
}

func (b *sentBody) Close() error { return nil }

// watchedConn is the TCP connection under a ClientConn. It records what
// x/net's errors do not say: that the connection is lost (an I/O error, or
// closed), and whether a read or a write failed first. The errors that
// closing it causes are not failures: x/net closes a connection after a
// GOAWAY, or when it breaks the connection for a protocol error.
type watchedConn struct {
	net.Conn
	failed atomic.Uint32 // the protocol.ErrClass of the first failed Read or Write
	closed atomic.Bool
}

func (w *watchedConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if err != nil && !w.closed.Load() {
		w.failed.CompareAndSwap(0, uint32(protocol.Read))
	}
	return n, err
}

func (w *watchedConn) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	if err != nil && !w.closed.Load() {
		w.failed.CompareAndSwap(0, uint32(protocol.Write))
	}
	return n, err
}

func (w *watchedConn) Close() error {
	w.closed.Store(true)
	return w.Conn.Close()
}

func (w *watchedConn) lost() bool { return w.closed.Load() || w.failed.Load() != 0 }

// failure returns the class of the first failed I/O, or otherwise.
func (w *watchedConn) failure(otherwise protocol.ErrClass) protocol.ErrClass {
	if f := protocol.ErrClass(w.failed.Load()); f != protocol.None {
		return f
	}
	return otherwise
}
