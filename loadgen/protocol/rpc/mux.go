package rpc

import (
	"context"
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// The event loop's side of gRPC: calls over HTTP/2 on a connection the
// loop drives (h2conn.Fed), each slot's reply read by the same reply as a
// Dial's. A unary call is a stream of its own; a ping-pong slot keeps its
// stream (h2conn.Fed.Keep), each request one message on it, answered by
// the next reply, the stream opened with the slot's first message (and
// again after the server ended it, or a deadline reset it). Over TLS the
// connection is opened in a goroutine (crypto/tls owns the handshake) and
// its records then go through memory (protocol.TLSMux).

var _ protocol.MuxOpener = (*Dialer)(nil)

// Sessions tells whether an event loop can drive the calls and streams:
// unary calls and ping-pong streams; goroutines drive server- and
// client-streaming calls.
func (d *Dialer) Sessions() bool { return d.s.Mode == Unary || d.s.Mode == Stream }

// Socket starts a plaintext connection for an event loop (see
// protocol.Target).
func (d *Dialer) Socket() (int, error) { return d.sock.Socket() }

// Opens tells that connections over TLS are opened by Open.
func (d *Dialer) Opens() bool { return d.tls != nil && d.Sessions() }

// Open opens a connection over TLS for an event loop.
func (d *Dialer) Open(ctx context.Context, slots int) (int, protocol.Mux, error) {
	fd, lt, err := d.core.OpenTLS(ctx)
	if err != nil {
		return -1, nil, d.explain(err)
	}
	return fd, protocol.TLSMux(d.Mux(slots), lt), nil
}

// Mux returns the state of one connection an event loop drives, for slots
// calls (or ping-pong streams) at once.
func (d *Dialer) Mux(slots int) protocol.Mux {
	unary := d.s.Mode != Stream
	m := &mux{replies: make([]reply, slots)}
	hs := make([]h2conn.Handler, slots)
	for k := range m.replies {
		m.replies[k] = reply{check: d.check, unary: unary, written: int64(len(d.req))}
		hs[k] = &m.replies[k]
	}
	m.Fed = d.core.Fed(slots, d.req, hs...)
	if !unary {
		m.Fed.Keep()
	}
	return m
}

// mux is the Fed in the engine's terms: each slot's reply makes its
// Outcome.
type mux struct {
	*h2conn.Fed
	replies []reply
}

var errPeerClosed = errors.New("connection closed by the server")

func (m *mux) Fail(class protocol.ErrClass) []int32 { return m.Fed.Fail(class, errPeerClosed) }

func (m *mux) Start(k int) (int, protocol.Outcome) {
	r := &m.replies[k]
	if m.Fed.Fresh(k) { // a new stream: a kept one's reply goes on
		r.reset()
	}
	switch how, res := m.Fed.Start(k); how {
	case h2conn.Started:
		return protocol.MuxStarted, protocol.Outcome{}
	case h2conn.Later:
		return protocol.MuxLater, protocol.Outcome{}
	default:
		r.Settle(res)
		return protocol.MuxRefused, r.o
	}
}

func (m *mux) Outcome(k int) protocol.Outcome {
	m.Fed.Result(k) // settles the slot's reply
	return m.replies[k].o
}

func (m *mux) Cancel(k int) protocol.Outcome {
	m.Fed.Cancel(k)
	o := m.replies[k].o
	o.Err = protocol.Timeout
	return o
}
