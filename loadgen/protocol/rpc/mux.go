package rpc

import (
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// The event loop's side of gRPC: unary calls over plaintext HTTP/2 on a
// connection the loop drives (h2conn.Fed), each slot's reply read by the
// same reply as a Dial's. Over TLS, and for ping-pong streams, the calls
// stay goroutine-driven.

var _ protocol.MuxDialer = (*Dialer)(nil)

// Sessions tells whether an event loop can drive the calls: unary ones
// without TLS.
func (d *Dialer) Sessions() bool { return d.tls == nil && d.s.Mode != Stream }

// Socket starts a connection for an event loop (see protocol.Target).
func (d *Dialer) Socket() (int, error) { return d.sock.Socket() }

// Mux returns the state of one connection an event loop drives, for slots
// calls at once.
func (d *Dialer) Mux(slots int) protocol.Mux {
	m := &mux{replies: make([]reply, slots)}
	hs := make([]h2conn.Handler, slots)
	for k := range m.replies {
		m.replies[k] = reply{check: d.check, unary: true, written: int64(len(d.req))}
		hs[k] = &m.replies[k]
	}
	m.f = d.core.Fed(slots, d.req, hs...)
	return m
}

type mux struct {
	f       *h2conn.Fed
	replies []reply
}

var errPeerClosed = errors.New("connection closed by the server")

func (m *mux) Output() []byte       { return m.f.Output() }
func (m *mux) Wrote(n int)          { m.f.Wrote(n) }
func (m *mux) ReadBuf() []byte      { return m.f.ReadBuf() }
func (m *mux) Filled(n int) []int32 { return m.f.Filled(n) }
func (m *mux) Ready() bool          { return m.f.Ready() }
func (m *mux) Usable() bool         { return m.f.Usable() }
func (m *mux) Dead() bool           { dead, _ := m.f.Dead(); return dead }
func (m *mux) Goodbye() []byte      { return m.f.Goodbye() }

func (m *mux) Fail(class protocol.ErrClass) []int32 { return m.f.Fail(class, errPeerClosed) }

func (m *mux) Start(k int) (int, protocol.Outcome) {
	r := &m.replies[k]
	r.reset()
	switch how, res := m.f.Start(k); how {
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
	m.f.Result(k) // settles the slot's reply
	return m.replies[k].o
}

func (m *mux) Cancel(k int) protocol.Outcome {
	m.f.Cancel(k)
	o := m.replies[k].o
	o.Err = protocol.Timeout
	return o
}
