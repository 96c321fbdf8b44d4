package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"loadgen/loadgen/proto"
	"loadgen/loadgen/proto/h2wire"
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

	mu  sync.Mutex
	cur *transport // the connection new Conns join until it has Streams of them
}

var (
	_ proto.Dialer      = (*Dialer)(nil)
	_ proto.ConnCounter = (*Dialer)(nil)
)

// NewDialer validates cfg and builds the request once.
func NewDialer(cfg Config) (*Dialer, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	d := &Dialer{s: s, req: newRequest(s)}
	method := unaryMethod
	switch {
	case s.Health:
		method = healthMethod
		d.check = replyCheck{kind: healthReply}
	case s.Mode == Stream:
		method = pingPongMethod
	}
	if !s.Health {
		want := s.Size
		switch {
		case s.ResponseSize < 0:
			want = 0
		case s.ResponseSize > 0:
			want = s.ResponseSize
		}
		d.check = replyCheck{kind: echoReply, want: want}
	}
	if s.TLS.Enabled {
		if d.tls, err = s.TLS.Config(s.host, "h2"); err != nil {
			return nil, err
		}
	}
	d.fields = requestFields(s, d.tls != nil, method)
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
func (d *Dialer) Dial(ctx context.Context) (proto.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.s.DialTimeout)
	defer cancel()
	t, err := d.attach(ctx)
	if err != nil {
		return nil, err
	}
	if d.s.Mode == Stream {
		c, err := newStreamConn(ctx, d, t)
		if errors.Is(err, errGoingAway) { // GOAWAY came meanwhile: once more, elsewhere
			d.release(t, true)
			if t, err = d.attach(ctx); err != nil {
				return nil, err
			}
			c, err = newStreamConn(ctx, d, t)
		}
		if err != nil {
			d.release(t, true)
			return nil, err
		}
		return c, nil
	}
	return newUnaryConn(d, t), nil
}

// attach returns a reference on a connected transport: the current one,
// or a new one it connects.
func (d *Dialer) attach(ctx context.Context) (*transport, error) {
	t, fresh := d.acquire()
	if fresh {
		t.err0 = t.connect(ctx)
		close(t.ready)
	} else {
		select {
		case <-t.ready:
		case <-ctx.Done():
			d.release(t, true)
			return nil, fmt.Errorf("grpc: waiting for the connection to %s: %w", d.s.Target, ctx.Err())
		}
	}
	if t.err0 != nil {
		d.release(t, true)
		return nil, t.err0
	}
	return t, nil
}

// acquire takes a reference on the current connection, or on a new one
// (fresh: the caller connects it).
func (d *Dialer) acquire() (t *transport, fresh bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t := d.cur; t != nil && t.handed < d.s.Streams && t.joinable() {
		t.handed++
		t.refs++
		return t, false
	}
	t = newTransport(d)
	t.handed, t.refs = 1, 1
	d.cur = t
	return t, true
}

// joinable: not failed, not draining (a connection still dialing is).
func (t *transport) joinable() bool {
	select {
	case <-t.ready:
		return t.err0 == nil && t.usable()
	default:
		return true
	}
}

// release drops a reference to t and closes it with the last one. A failed
// connection takes no more Conns.
func (d *Dialer) release(t *transport, failed bool) {
	d.mu.Lock()
	t.refs--
	last := t.refs == 0
	if d.cur == t && (failed || last) {
		d.cur = nil
	}
	d.mu.Unlock()
	if last {
		t.close()
	}
}
