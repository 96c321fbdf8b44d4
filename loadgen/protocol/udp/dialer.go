package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
)

var (
	_ protocol.Dialer          = (*Dialer)(nil)
	_ protocol.DatagramCounter = (*Dialer)(nil)
	_ protocol.Resolver        = (*Dialer)(nil)
)

// controlRetry is how long one control datagram (the probe, a sink's
// opening, its count) waits for its answer before it is sent again.
const controlRetry = 200 * time.Millisecond

// Dialer opens udp-rr or udp-stream connections (connected UDP sockets)
// to one target and counts their datagrams. It is safe for concurrent use.
type Dialer struct {
	cfg     Config
	target  protocol.Target
	payload []byte // the datagram's bytes; udp-rr's connections copy it
	probed  atomic.Bool

	sent, received, receivedBytes, unknown atomic.Int64
	settling                               sync.WaitGroup // udp-stream connections asking their sink's count
}

// NewDialer checks cfg and returns a Dialer for it.
func NewDialer(cfg Config) (*Dialer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	return &Dialer{cfg: cfg, target: protocol.Target{Addr: cfg.Addr}, payload: fill(cfg.Size)}, nil
}

// fill returns n bytes of printable text, whose start is never control's.
func fill(n int) []byte {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n"
	b := make([]byte, n)
	for i := 0; i < n; i += copy(b[i:], pattern) {
	}
	return b
}

// Resolve looks the target's name up once, before a run, from where the
// sockets are made (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error {
	if d.cfg.Enter == nil {
		return d.target.Resolve(ctx)
	}
	return d.cfg.Enter(func() error { return d.target.Resolve(ctx) })
}

// Dial opens one connected UDP socket. A udp-stream one first opens the
// sink (the target then counts what it receives from this socket). The
// first udp-rr Dial probes the target once, with a control datagram the
// target answers without counting it, so that an unreachable target fails
// the engine's first Dial rather than every request.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	c, err := d.open(ctx)
	if err != nil {
		return nil, err
	}
	switch d.cfg.Mode {
	case Stream:
		if err := d.exchange(ctx, c, controlOpen, controlOK); err != nil {
			c.Close()
			return nil, fmt.Errorf("udp: opening the sink at %s: %w (is it loadgen serve udp?)", d.cfg.Addr, err)
		}
		return &streamConn{d: d, c: c}, nil
	default:
		if !d.probed.Load() {
			if err := d.exchange(ctx, c, controlPing, controlOK); err != nil {
				c.Close()
				return nil, fmt.Errorf("udp: probing %s: %w", d.cfg.Addr, err)
			}
			d.probed.Store(true)
		}
		return newRRConn(d, c), nil
	}
}

func (d *Dialer) open(ctx context.Context) (*net.UDPConn, error) {
	var nd net.Dialer
	var c net.Conn
	var err error
	dial := func() error {
		c, err = nd.DialContext(ctx, "udp", d.target.DialAddr())
		return err
	}
	if d.cfg.Enter == nil {
		dial()
	} else {
		d.cfg.Enter(dial)
	}
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

// errNoAnswer is a control exchange that got no answer in time.
var errNoAnswer = errors.New("no answer")

// exchange sends control+ask until the answer control+want (or, from a
// plain echo, the ask itself) comes back, within ctx and the dial timeout.
// It returns the answer's text after control.
func (d *Dialer) exchange(ctx context.Context, c *net.UDPConn, ask, want string) error {
	_, err := d.ask(ctx, c, ask, func(a string) bool { return a == want || a == ask })
	return err
}

// ask sends control+q every controlRetry until an answer that ok accepts,
// ctx ends or the dial timeout passes; datagrams that are not answers are
// skipped.
func (d *Dialer) ask(ctx context.Context, c *net.UDPConn, q string, ok func(string) bool) (string, error) {
	end := time.Now().Add(d.cfg.DialTimeout)
	if dl, has := ctx.Deadline(); has && dl.Before(end) {
		end = dl
	}
	defer c.SetDeadline(time.Time{})
	buf := make([]byte, 512)
	msg := []byte(control + q)
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := c.Write(msg); err != nil {
			return "", err
		}
		c.SetReadDeadline(minTime(end, time.Now().Add(controlRetry)))
		for {
			n, err := c.Read(buf)
			if err != nil {
				if ne, isNet := err.(net.Error); isNet && ne.Timeout() {
					break // send again
				}
				return "", err
			}
			if a, isCtl := strings.CutPrefix(string(buf[:n]), control); isCtl && ok(a) {
				return a, nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%w within %v", errNoAnswer, d.cfg.DialTimeout)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Datagrams waits, within ctx, for the closed udp-stream connections to
// have their sinks' counts, and returns the totals so far.
func (d *Dialer) Datagrams(ctx context.Context) (protocol.Datagrams, bool) {
	done := make(chan struct{})
	go func() { d.settling.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return protocol.Datagrams{
		Sent: d.sent.Load(), Received: d.received.Load(), ReceivedBytes: d.receivedBytes.Load(), Unknown: d.unknown.Load(),
	}, true
}

// classify names a failed read or write: past the deadline is Timeout.
func classify(err error, op protocol.ErrClass) protocol.ErrClass {
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return protocol.Timeout
	}
	return op
}
