package h2

import (
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// The event loop's side of h2c: a connection the loop drives as a
// protocol.Mux, on the one HTTP/2 connection layer (h2conn.Fed). Over TLS
// the connections stay goroutine-driven (crypto/tls owns the socket).

var _ protocol.MuxDialer = (*Dialer)(nil)

// Sessions tells whether an event loop can drive the connections: h2c
// only.
func (d *Dialer) Sessions() bool { return !d.t.tls }

// Socket starts a connection for an event loop (see protocol.Target).
func (d *Dialer) Socket() (int, error) { return d.sock.Socket() }

// Mux returns the state of one connection an event loop drives, for slots
// requests at once.
func (d *Dialer) Mux(slots int) protocol.Mux { return &mux{d.core.Fed(slots, d.t.body)} }

// mux is the Fed in the engine's terms: its results as Outcomes.
type mux struct{ *h2conn.Fed }

var errPeerClosed = errors.New("connection closed by the server")

func (m *mux) Fail(class protocol.ErrClass) []int32 { return m.Fed.Fail(class, errPeerClosed) }

func (m *mux) Start(k int) (int, protocol.Outcome) {
	switch how, r := m.Fed.Start(k); how {
	case h2conn.Started:
		return protocol.MuxStarted, protocol.Outcome{}
	case h2conn.Later:
		return protocol.MuxLater, protocol.Outcome{}
	default:
		return protocol.MuxRefused, outcome(r)
	}
}

func (m *mux) Outcome(k int) protocol.Outcome { return outcome(m.Fed.Result(k)) }

func (m *mux) Cancel(k int) protocol.Outcome {
	o := outcome(m.Fed.Cancel(k))
	o.Err = protocol.Timeout
	return o
}
