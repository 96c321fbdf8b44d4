package tcp

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
)

var (
	_ protocol.Dialer      = (*Dialer)(nil)
	_ protocol.ConnCounter = (*Dialer)(nil)
)

// Dialer opens tcp-rr, tcp-crr or tcp-stream connections to one target. It
// is safe for concurrent use.
type Dialer struct {
	cfg     Config
	target  protocol.Target // for the event loop's sockets
	nd      net.Dialer
	payload []byte // what each request writes; shared and never modified
	opened  atomic.Int64
	probed  atomic.Bool // tcp-crr: a Dial has reached the target once
}

// NewDialer checks cfg and returns a Dialer for it.
func NewDialer(cfg Config) (*Dialer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	return &Dialer{
		cfg:     cfg,
		target:  protocol.Target{Addr: cfg.Addr},
		nd:      net.Dialer{Timeout: cfg.DialTimeout},
		payload: fill(cfg.Size),
	}, nil
}

// fill returns n bytes of printable text (readable in a packet capture)
// whose first byte is not SinkMagic's, so the target echoes it at once.
func fill(n int) []byte {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n"
	b := make([]byte, n)
	for i := 0; i < n; i += copy(b[i:], pattern) {
	}
	return b
}

// Dial opens one connection. For tcp-crr the Conn holds no socket: each Do
// connects and closes by itself. Until one has succeeded, a tcp-crr Dial
// connects once and closes at once, so that an unreachable target fails
// the engine's first Dial rather than every request.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	if d.cfg.Mode == CRR {
		if !d.probed.Load() {
			c, err := d.connect(ctx, time.Time{})
			if err != nil {
				return nil, err
			}
			c.Close()
			d.probed.Store(true)
		}
		return newCRRConn(d), nil
	}
	c, err := d.connect(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	switch d.cfg.Mode {
	case Stream:
		if nd, ok := c.(interface{ SetNoDelay(bool) error }); ok {
			_ = nd.SetNoDelay(false) // Nagle on: see Stream
		}
		if err := sendMagic(ctx, c); err != nil {
			c.Close()
			return nil, err
		}
		return newStreamConn(c, d.payload), nil
	default:
		return newRRConn(c, d.payload), nil
	}
}

// Opened counts the TCP connections established so far, those made inside
// tcp-crr's Do included.
func (d *Dialer) Opened() int64 { return d.opened.Load() }

// Resolve looks the target's name up once, before a run, from the
// namespace the connections are opened in (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error {
	if d.cfg.Enter == nil {
		return d.target.Resolve(ctx)
	}
	return d.cfg.Enter(func() error { return d.target.Resolve(ctx) })
}

// connect opens one TCP connection, bounded by ctx, deadline (zero means
// none) and the dial timeout.
func (d *Dialer) connect(ctx context.Context, deadline time.Time) (net.Conn, error) {
	nd := d.nd
	nd.Deadline = deadline
	var c net.Conn
	var err error
	if d.cfg.Enter == nil {
		c, err = nd.DialContext(ctx, "tcp", d.target.DialAddr())
	} else {
		err = d.cfg.Enter(func() (err error) {
			c, err = nd.DialContext(ctx, "tcp", d.target.DialAddr())
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	d.opened.Add(1)
	return c, nil
}

func sendMagic(ctx context.Context, c net.Conn) error {
	if dl, ok := ctx.Deadline(); ok {
		c.SetWriteDeadline(dl)
		defer c.SetWriteDeadline(time.Time{})
	}
	if _, err := c.Write([]byte(SinkMagic)); err != nil {
		return fmt.Errorf("tcp: opening the stream: %w", err)
	}
	return nil
}
