// The library client: the same load as NewDialer's, made through grpc-go's
// own client (grpc.NewClient, ClientConn.Invoke, ClientConn.NewStream)
// instead of this package's HTTP/2 client. It is the reference
// implementation: run it next to the lean client to cross-check its
// results, or use it when grpc-go's behaviour is what you want to measure
// (its flow control with BDP estimation, its framing and write batching,
// deadlines sent as grpc-timeout, transparent retry of streams the server
// refused unprocessed). It allocates per call as grpc-go does (some 90
// allocations and several goroutine hand-offs a unary call with a
// deadline, 10 a ping-pong message, where the lean client allocates
// nothing), so it costs more generator CPU per call and saturates a
// generator sooner: compare the two clients at the same rate, not at their
// maxima (BenchmarkDo/library and BenchmarkDo/lean show the difference).

package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// libraryDialer hands out Conns as Dialer does, Config.Streams of them per
// grpc-go ClientConn (a channel): Dials 1…m share the first channel, m+1…2m
// the second, and so on. A channel is one TCP connection: it is connected
// when its first Conn is dialed and closed with its last Conn, and it never
// reconnects, so that Opened counts what the lean client counts. It is safe
// for concurrent use.
type libraryDialer struct {
	s       settings
	method  string
	req     rawRequest
	written int64      // request bytes per call: prefix and message
	check   replyCheck // how a reply is judged
	creds   credentials.TransportCredentials
	opts    []grpc.DialOption // shared by every channel
	ctx     context.Context   // carries the metadata; every Conn's context derives from it

	opened atomic.Int64
	conns  h2conn.Group[*libChannel]

	// The window Conns join (Config.Window > 1, window.go).
	winMu    sync.Mutex
	win      *window
	winConns int         // Conns on win
	winCh    *libChannel // win's channel
}

var (
	_ protocol.Dialer      = (*libraryDialer)(nil)
	_ protocol.ConnCounter = (*libraryDialer)(nil)
	_ protocol.Conn        = (*libConn)(nil)
)

// pingPongDesc describes Stream mode's method to grpc-go, Echo/PingPong or
// a Call: a bidirectional stream. (Its StreamName is for servers only.)
var pingPongDesc = grpc.StreamDesc{StreamName: "PingPong", ServerStreams: true, ClientStreams: true}

// NewLibraryDialer validates cfg as NewDialer does and returns a Dialer
// whose Conns make the same calls, with the same request bytes, reply
// checks and outcomes, through grpc-go's client. The Dialer implements
// protocol.ConnCounter.
//
// Outcome.Bytes and Outcome.Written count gRPC messages with their 5-byte
// prefix, as the lean client does; grpc-go does not say what its frames
// and headers cost on the wire.
func NewLibraryDialer(cfg Config) (protocol.Dialer, error) {
	// The lean Dialer's construction validates cfg and builds what both
	// clients share: the request, the reply check and the TLS config.
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	window := cfg.Window
	cfg.Window = 0 // the lean client has none
	lean, err := NewDialer(cfg)
	if err != nil {
		return nil, err
	}
	s := lean.s
	s.Window = window
	d := &libraryDialer{
		s:       s,
		method:  s.method(),
		req:     rawRequest{msg: mem.SliceBuffer(lean.req[prefixLen:])},
		written: int64(len(lean.req)),
		check:   lean.check,
		creds:   insecure.NewCredentials(),
		ctx:     context.Background(),
	}
	if lean.tls != nil {
		d.creds = credentials.NewTLS(lean.tls)
	}
	if len(s.md) > 0 {
		d.ctx = metadata.NewOutgoingContext(d.ctx, metadata.Pairs(s.md...))
	}
	ua := "loadgen" // grpc-go appends its own name and version
	if s.userAgent != "" {
		ua = s.userAgent
	}
	d.opts = []grpc.DialOption{
		grpc.WithDefaultCallOptions(
			grpc.ForceCodecV2(rawCodec{}),
			// grpc-go refuses replies over 4 MiB by default; the sizes
			// allowed here go to 64 MiB.
			grpc.MaxCallRecvMsgSize(maxMessage),
			grpc.MaxCallSendMsgSize(maxMessage),
		),
		grpc.WithUserAgent(ua),
		grpc.WithNoProxy(), // a load test measures its path: never through HTTPS_PROXY
		// Nothing but the calls asked for: no service config from the
		// resolver, no retries, no health-checking stream, and no idle
		// mode (which would close a quiet channel's connection).
		grpc.WithDisableServiceConfig(),
		grpc.WithDisableRetry(),
		grpc.WithDisableHealthCheck(),
		grpc.WithIdleTimeout(0),
	}
	if s.authority != "" {
		d.opts = append(d.opts, grpc.WithAuthority(s.authority))
	}
	d.conns = h2conn.Group[*libChannel]{
		Streams: s.Streams,
		Name:    "grpc",
		Target:  s.Target,
		Open:    func() *libChannel { return new(libChannel) },
		Connect: d.connect,
		Live:    (*libChannel).live,
		Close:   (*libChannel).close,
	}
	return d, nil
}

// Opened counts the channels whose connection became ready: the target
// answered with HTTP/2 settings. Each is one TCP connection.
func (d *libraryDialer) Opened() int64 { return d.opened.Load() }

// Dial returns a Conn on the current channel, opening a channel when the
// current one has Streams Conns already or has lost its connection,
// bounded by ctx and Config.DialTimeout. In Stream mode it also opens the
// Conn's ping-pong stream.
func (d *libraryDialer) Dial(ctx context.Context) (protocol.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.s.DialTimeout)
	defer cancel()
	ch, err := d.conns.Attach(ctx)
	if err != nil {
		return nil, err
	}
	c := &libConn{d: d, ch: ch, reply: rawReply{check: d.check}}
	c.ctx, c.cancel = context.WithCancel(d.ctx)
	if d.s.Window > 1 {
		wc, err := d.dialWindow(ctx, c)
		if err != nil {
			c.cancel()
			d.conns.Release(ch, true)
			return nil, err
		}
		return wc, nil
	}
	if d.s.Mode == Stream {
		if err := c.openStream(ctx); err != nil {
			c.cancel()
			d.conns.Release(ch, true)
			return nil, err
		}
	}
	return c, nil
}

// connect makes ch's ClientConn and waits until its connection is ready.
// grpc.NewClient connects lazily; a load generator wants the connection
// made at Dial, not timed as part of the first call.
func (d *libraryDialer) connect(ctx context.Context, ch *libChannel) error {
	opts := append(slices.Clip(d.opts),
		grpc.WithTransportCredentials(trackedCreds{TransportCredentials: d.creds, ch: ch}),
		grpc.WithContextDialer(ch.dial),
	)
	// passthrough: the target is dialed as given, with no DNS resolver
	// between (the lean client dials it the same way).
	cc, err := grpc.NewClient("passthrough:///"+d.s.Target, opts...)
	if err != nil {
		return fmt.Errorf("grpc: grpc-go client for %s: %w", d.s.Target, err)
	}
	ch.cc = cc
	cc.Connect()
	for {
		switch state := cc.GetState(); state {
		case connectivity.Ready:
			if err := ctx.Err(); err != nil { // it may be ready before grpc-go looks at ctx
				return d.explain(ctx, ch, err)
			}
			d.opened.Add(1)
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return d.explain(ctx, ch, nil)
		default:
			if !cc.WaitForStateChange(ctx, state) {
				return d.explain(ctx, ch, ctx.Err())
			}
		}
	}
}

// explain says why ch did not connect, in one line saying what to do.
// ctxErr is set when the Dial's context ended first.
func (d *libraryDialer) explain(ctx context.Context, ch *libChannel, ctxErr error) error {
	target := d.s.Target
	ch.mu.Lock()
	dialErr, tlsErr := ch.dialErr, ch.tlsErr
	ch.mu.Unlock()
	hint := " (does it expect TLS? add --tls)"
	if d.creds.Info().SecurityProtocol == "tls" {
		hint = ""
	}
	switch {
	case dialErr != nil:
		return fmt.Errorf("grpc: %w", dialErr)
	case tlsErr != nil:
		return explainHandshake(target, d.s.DialTimeout, tlsErr)
	case ctxErr != nil:
		return fmt.Errorf("grpc: dialing %s: %w before it answered with HTTP/2 settings: is it a gRPC server?%s", target, ctxErr, hint)
	}
	// The HTTP/2 handshake failed. grpc-go keeps its reason for the calls
	// it fails: a call made now tells it, and fails before reaching the
	// target, as the channel has no connection and will not get one.
	reply := rawReply{check: d.check}
	err := ch.cc.Invoke(ctx, d.method, &d.req, &reply)
	return fmt.Errorf("grpc: %s did not answer as a gRPC server over HTTP/2 (grpc-go: %s): is it a gRPC server?%s", target, status.Convert(err).Message(), hint)
}

// libChannel is one ClientConn and its one TCP connection.
type libChannel struct {
	h2conn.Member // in its dialer's Group

	cc *grpc.ClientConn

	dialed atomic.Bool // its TCP connection was dialed
	broken atomic.Bool // its TCP connection was closed, or a reconnection refused

	mu              sync.Mutex
	dialErr, tlsErr error // why the TCP dial or the TLS handshake failed
}

// errOneConnection is what a channel's second dial gets.
var errOneConnection = errors.New("grpc: a loadgen channel does not reconnect: its Conns fail and the engine dials new ones")

// dial is the channel's grpc.WithContextDialer: it dials the target once.
// grpc-go would reconnect a channel that lost its connection; refusing
// makes the channel's calls fail instead (Unavailable, a read error), as
// the lean client's do, and the engine's new Dials open a new channel,
// which Opened counts.
func (ch *libChannel) dial(ctx context.Context, addr string) (net.Conn, error) {
	if ch.dialed.Swap(true) {
		ch.broken.Store(true)
		return nil, errOneConnection
	}
	var nd net.Dialer // TCP_NODELAY is Go's default
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		ch.mu.Lock()
		ch.dialErr = err
		ch.mu.Unlock()
		return nil, err
	}
	return &trackedConn{Conn: nc, ch: ch}, nil
}

// live reports whether the connected channel's connection is not broken, and
// ready.
func (ch *libChannel) live() bool {
	return !ch.broken.Load() && ch.cc.GetState() == connectivity.Ready
}

// close closes the channel, with its last Conn. The connecting Dial set cc
// (nil if NewClient failed) before it released its own reference under the
// group's mu: the last release sees it.
func (ch *libChannel) close() {
	if ch.cc != nil {
		ch.cc.Close()
	}
}

// trackedConn marks its channel broken when grpc-go closes it. grpc-go
// closes a failed connection before it fails the calls on it, so a call
// failing Unavailable on a broken channel lost its connection, while one
// on a live channel got that status from the server.
type trackedConn struct {
	net.Conn
	ch *libChannel
}

func (c *trackedConn) Close() error {
	c.ch.broken.Store(true)
	return c.Conn.Close()
}

// trackedCreds keeps a failed TLS handshake's error, which grpc-go turns
// into text, for explainHandshake (certificate errors say what to do).
type trackedCreds struct {
	credentials.TransportCredentials
	ch *libChannel
}

func (c trackedCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	nc, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		c.ch.mu.Lock()
		c.ch.tlsErr = err
		c.ch.mu.Unlock()
	}
	return nc, info, err
}

func (c trackedCreds) Clone() credentials.TransportCredentials {
	return trackedCreds{TransportCredentials: c.TransportCredentials.Clone(), ch: c.ch}
}

// rawCodec carries prebuilt messages through grpc-go: Marshal hands over
// the request newRequest encoded once, and Unmarshal judges a reply as the
// lean client does, from its head and length, without decoding it. It is
// named "proto", so that calls go as application/grpc+proto, what a
// protobuf server expects. It is forced on each channel, not registered:
// registering it would replace the protobuf codec of every grpc-go client
// and server in the process.
type rawCodec struct{}

// rawRequest is a request message for rawCodec.
type rawRequest struct {
	msg mem.Buffer // a SliceBuffer: read-only, shared by every call
}

// rawReply is what rawCodec found in a reply message.
type rawReply struct {
	check   replyCheck
	got     bool // a message came
	size    int  // its length, prefix excluded
	verdict verdict
	head    [headLen]byte
}

func (r *rawReply) reset() { r.got, r.size, r.verdict = false, 0, replyOK }

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*rawRequest)
	if !ok {
		return nil, fmt.Errorf("grpc: the raw codec sends prebuilt requests, not %T", v)
	}
	// A new slice, as grpc-go frees what Marshal returns; freeing and
	// referencing a SliceBuffer do nothing, so the bytes stay shared.
	return mem.BufferSlice{r.msg}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawReply)
	if !ok {
		return fmt.Errorf("grpc: the raw codec reads replies only into its own type, not %T", v)
	}
	r.got, r.size = true, data.Len()
	n := data.CopyTo(r.head[:])
	r.verdict = r.check.check(r.head[:n], r.size)
	return nil
}

// libConn is one Conn of the library client: unary calls on its channel,
// or (Stream mode) its own ping-pong stream.
//
// Its context carries the metadata and ends with Close, with the end of the
// run's context and, in Stream mode, at a Do's deadline: whatever the Conn
// is doing is then aborted, and the Conn is done, as the lean client's.
type libConn struct {
	d      *libraryDialer
	ch     *libChannel
	ctx    context.Context
	cancel context.CancelFunc
	reply  rawReply

	st      grpc.ClientStream // Stream mode: the ping-pong stream
	timer   *time.Timer       // Stream mode: ends the stream at a Do's deadline; stopped between Dos
	expired atomic.Bool       // the timer fired

	runLink
}

// openStream opens the Conn's ping-pong stream (its headers go out now).
// ctx bounds the opening; the stream lives with the Conn.
func (c *libConn) openStream(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.cancel)
	st, err := c.ch.cc.NewStream(c.ctx, &pingPongDesc, c.d.method)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("grpc: opening a ping-pong stream on %s: %w", c.d.s.Target, err)
	}
	c.st = st
	// gRPC has no per-message deadline: past a Do's, the stream is
	// cancelled (reset). One timer for the Conn's life: a Do costs a
	// Reset, not a timer.
	c.timer = time.AfterFunc(math.MaxInt64, func() {
		c.expired.Store(true)
		c.cancel()
	})
	c.timer.Stop()
	return nil
}

// Do makes one unary call, or sends one ping-pong message and reads its
// reply. A deadline is the unary call's deadline (grpc-go sends it as
// grpc-timeout); on a stream, it cancels the stream.
func (c *libConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if ctx != c.linked {
		c.link(ctx, c.cancel)
	}
	if c.ctx.Err() != nil { // closed, timed out before, or the run is over
		return protocol.Outcome{Err: protocol.Read, Done: true}
	}
	var left time.Duration
	if !deadline.IsZero() {
		if left = time.Until(deadline); left <= 0 {
			return protocol.Outcome{Err: protocol.Timeout}
		}
	}
	c.reply.reset()
	if c.st != nil {
		return c.pingPong(left)
	}
	call, cancel := c.ctx, context.CancelFunc(nil)
	if left > 0 {
		call, cancel = context.WithDeadline(c.ctx, deadline)
	}
	err := c.ch.cc.Invoke(call, c.d.method, &c.d.req, &c.reply)
	expired := false
	if cancel != nil {
		// grpc-go sends the deadline as grpc-timeout, so the server may
		// report it passed (DeadlineExceeded) before the client's timer
		// fires: either way it is this call's deadline.
		expired = errors.Is(call.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
		cancel()
	}
	o := c.outcome(err, expired)
	if expired {
		o.Done = true // as the lean client's, whose timed-out call ends the Conn
	}
	return o
}

// pingPong sends the message and reads one reply, until left (0: no
// deadline). After any failure the stream is dead: the Conn is done.
func (c *libConn) pingPong(left time.Duration) protocol.Outcome {
	if left > 0 {
		c.timer.Reset(left)
	}
	err := c.st.SendMsg(&c.d.req)
	if err == nil || err == io.EOF { // io.EOF: the stream ended; RecvMsg says how
		err = c.st.RecvMsg(&c.reply)
	}
	fired := left > 0 && !c.timer.Stop()
	o := c.outcome(err, fired)
	if fired || o.Err != protocol.None {
		o.Done = true
	}
	return o
}

// outcome maps a call's result as the lean client's conn.outcome does.
// expired: the Conn's own deadline ended the call.
func (c *libConn) outcome(err error, expired bool) protocol.Outcome {
	o := protocol.Outcome{Written: c.d.written}
	if c.reply.got {
		o.Bytes = int64(prefixLen + c.reply.size)
	}
	switch {
	case err == nil:
		switch c.reply.verdict {
		case replyBad:
			o.Err = protocol.Protocol
		case replyNotServing:
			o.Err = protocol.Status // the call worked; the server is not serving
		}
		return o
	case expired:
		o.Err, o.Done = protocol.Timeout, true
		return o
	case c.ctx.Err() != nil: // closed, or the run is over
		o.Err, o.Done = protocol.Read, true
		return o
	case err == io.EOF:
		o.Err, o.Done = protocol.Read, true // the server ended the stream without a reply
		return o
	}
	code := status.Code(err)
	o.Status, o.Err = int32(code), protocol.Status
	switch {
	case code == codes.DeadlineExceeded: // from the server or a proxy
		o.Err = protocol.Timeout
	case code == codes.Unavailable && c.ch.broken.Load():
		o.Err, o.Done = protocol.Read, true // the connection is gone
	}
	return o
}

// Close aborts what the Conn is doing (the call or the stream is
// cancelled) and releases its channel, closing it with its last Conn. It
// is safe to call more than once and from another goroutine than Do's.
func (c *libConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.cancel()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Lock()
	c.unlinkLocked()
	c.mu.Unlock()
	c.d.conns.Release(c.ch, false)
	return nil
}

// runLink ties a Conn to the run's context, whose end aborts the Conn, and
// marks the Conn closed.
type runLink struct {
	linked context.Context // the run context that aborts the Conn; only Do writes it
	mu     sync.Mutex      // guards unlink against Close
	unlink func() bool
	closed atomic.Bool
}

// link makes the end of ctx (the run's context, the same for every Do)
// call abort. It allocates once per Conn and run context.
func (l *runLink) link(ctx context.Context, abort func()) {
	l.linked = ctx
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlink != nil {
		l.unlink()
	}
	if !l.closed.Load() {
		l.unlink = context.AfterFunc(ctx, abort)
	}
}

// unlinkLocked, under mu, when the Conn is closed: the run's context no
// longer aborts it.
func (l *runLink) unlinkLocked() {
	if l.unlink != nil {
		l.unlink()
		l.unlink = nil
	}
}
