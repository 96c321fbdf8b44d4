package h2conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// DefaultDialTimeout bounds a Dial when Config.DialTimeout is 0.
const DefaultDialTimeout = 10 * time.Second

// Dialer opens connections and hands out Streams on them: every Streams
// consecutive Dials share one connection (see Group). It is safe for
// concurrent use.
type Dialer struct {
	cfg    Config
	blocks []h2wire.RequestBlocks // the request (a mix's requests) for a peer with the default HPACK table
	vary   []varied               // Config.Vary, by request; nil without
	opened atomic.Int64
	group  Group[*Conn]
}

// NewDialer prepares the request's header blocks. cfg is valid: the layers
// validate what their users give.
func NewDialer(cfg Config) *Dialer {
	if cfg.Streams < 1 {
		cfg.Streams = 1
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	d := &Dialer{cfg: cfg}
	d.blocks = d.encode(h2wire.DefaultTableSize)
	for _, fs := range cfg.Vary {
		v := varied{fields: fs}
		for _, f := range fs {
			v.names = append(v.names, h2wire.StaticNameIndex(f.Name))
		}
		d.vary = append(d.vary, v)
	}
	d.group = Group[*Conn]{
		Streams: cfg.Streams,
		Name:    cfg.Name,
		Target:  cfg.Addr,
		Open:    func() *Conn { return newConn(d, false) },
		Connect: func(ctx context.Context, c *Conn) error { return c.connect(ctx) },
		Live:    (*Conn).Usable,
		Close:   (*Conn).close,
	}
	return d
}

// Opened reports how many connections were established: their server
// answered the preface with its SETTINGS. A connection whose TCP dial, TLS
// handshake or HTTP/2 handshake failed is a failed Dial, not one of them.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// Blocks are the request's header blocks for a peer with the default
// HPACK table (for tests).
func (d *Dialer) Blocks() h2wire.RequestBlocks { return d.blocks[0] }

// encode encodes the request, or a mix's requests, for a peer whose
// HPACK table holds tableSize bytes.
func (d *Dialer) encode(tableSize uint32) []h2wire.RequestBlocks {
	if len(d.cfg.Requests) > 0 {
		return h2wire.EncodeRequests(d.cfg.Requests, tableSize)
	}
	return []h2wire.RequestBlocks{h2wire.EncodeRequest(d.cfg.Fields, tableSize)}
}

// Current is the connection new Streams join, nil when none (for tests).
func (d *Dialer) Current() *Conn { return d.group.Current() }

// errConnGone reports that the connection broke between a Dial choosing it
// and attaching to it.
var errConnGone = errors.New("connection closed before use")

// Dial returns a Stream on the current connection, opening a connection
// when the current one has its Streams or takes no more, within ctx and
// the DialTimeout. h is the layer's Handler for the Stream (nil: none).
// A failed connection's error is a *DialError.
func (d *Dialer) Dial(ctx context.Context, h Handler) (*Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.DialTimeout)
	defer cancel()
	for try := 1; ; try++ {
		c, err := d.group.Attach(ctx)
		if err != nil {
			return nil, err
		}
		if s := c.attach(h); s != nil {
			return s, nil
		}
		// The connection was closed (its other Streams were) or broke
		// between joining it and attaching to it: join the next one.
		d.group.Release(c, true)
		if try == 3 || ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %s: %w", d.cfg.Name, d.cfg.Addr, errConnGone)
		}
	}
}

// Stage is the step of opening a connection that failed.
type Stage uint8

const (
	StageTCP      Stage = iota // the TCP connect
	StageTLS                   // the TLS handshake
	StageALPN                  // TLS without ALPN h2
	StageSettings              // the server's SETTINGS did not come
)

// DialError is why a connection could not be opened, with what the layers
// need to say it in their users' terms.
type DialError struct {
	Stage    Stage
	Addr     string
	ALPN     string // StageALPN: the protocol the server chose, "" for none
	Head     []byte // StageSettings: the first bytes the server sent instead (at most 64)
	Timeout  bool   // the Dial's context ended first
	Protocol bool   // StageSettings: the server's SETTINGS broke HTTP/2 (Err says how)
	Err      error  // the underlying error, if any
}

func (e *DialError) Error() string {
	switch e.Stage {
	case StageTCP:
		return e.Err.Error()
	case StageTLS:
		return fmt.Sprintf("TLS handshake with %s: %v", e.Addr, e.Err)
	case StageALPN:
		return fmt.Sprintf("%s did not negotiate HTTP/2 (ALPN h2)", e.Addr)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: no HTTP/2 SETTINGS from the server: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("%s: no HTTP/2 SETTINGS from the server (first bytes % x)", e.Addr, e.Head)
}

func (e *DialError) Unwrap() error { return e.Err }

// HTTP1 reports that the server answered the preface in HTTP/1.x.
func (e *DialError) HTTP1() bool {
	return e.Stage == StageSettings && strings.HasPrefix(string(e.Head), "HTTP/")
}

// Silent reports that the server sent nothing at all before the Dial's
// deadline.
func (e *DialError) Silent() bool {
	return e.Stage == StageSettings && len(e.Head) == 0 && (e.Timeout || errors.Is(e.Err, os.ErrDeadlineExceeded))
}

// connect opens c: TCP, TLS with ALPN h2 (or nothing for h2c), and the
// exchange of SETTINGS, within ctx. It is the Group's Connect.
func (c *Conn) connect(ctx context.Context) error {
	cfg := &c.d.cfg
	var nd net.Dialer // TCP_NODELAY is Go's default
	raw, err := nd.DialContext(ctx, "tcp", cfg.dialAddr())
	if err != nil {
		return &DialError{Stage: StageTCP, Addr: cfg.Addr, Err: err, Timeout: ctx.Err() != nil}
	}
	fail := func(e *DialError) error {
		raw.Close()
		e.Addr = cfg.Addr
		e.Timeout = e.Timeout || ctx.Err() != nil
		return e
	}
	nc := raw
	if cfg.TLS != nil {
		tc := tls.Client(raw, cfg.TLS)
		if derr := handshakeTLS(ctx, tc); derr != nil {
			return fail(derr)
		}
		nc = tc
	}
	// The SETTINGS exchange is bounded by ctx through the deadline.
	dl, _ := ctx.Deadline()
	raw.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	c.raw, c.nc = raw, nc
	derr := c.handshake()
	if !stop() && derr == nil {
		derr = &DialError{Stage: StageSettings, Err: ctx.Err()}
	}
	if derr != nil {
		return fail(derr)
	}
	raw.SetDeadline(time.Time{})
	c.d.opened.Add(1)
	return nil
}

// handshakeTLS does tc's handshake within ctx and checks that it chose h2.
func handshakeTLS(ctx context.Context, tc *tls.Conn) *DialError {
	if err := tc.HandshakeContext(ctx); err != nil {
		if strings.Contains(err.Error(), "no application protocol") {
			return &DialError{Stage: StageALPN, Err: err}
		}
		return &DialError{Stage: StageTLS, Err: err}
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		return &DialError{Stage: StageALPN, ALPN: p}
	}
	return nil
}

// OpenTLS opens a connection over TLS for an event loop, within ctx and
// the DialTimeout: the TCP connect and the TLS handshake, as a Dial's,
// then the socket is handed over (the caller's to close), with the
// tls.Conn that goes on over memory. The HTTP/2 handshake is the loop's,
// on a Fed. Its error is a *DialError.
func (d *Dialer) OpenTLS(ctx context.Context) (int, *protocol.LoopTLS, error) {
	cfg := &d.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", cfg.dialAddr())
	if err != nil {
		return -1, nil, &DialError{Stage: StageTCP, Addr: cfg.Addr, Err: err, Timeout: ctx.Err() != nil}
	}
	lt := protocol.LoopTLSClient(raw, cfg.TLS)
	if derr := handshakeTLS(ctx, lt.Conn); derr != nil {
		raw.Close()
		lt.Release()
		derr.Addr, derr.Timeout = cfg.Addr, ctx.Err() != nil
		return -1, nil, derr
	}
	fd, err := lt.Handoff()
	if err != nil {
		raw.Close()
		lt.Release()
		return -1, nil, &DialError{Stage: StageTCP, Addr: cfg.Addr, Err: err}
	}
	return fd, lt, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
