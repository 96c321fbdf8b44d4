package h2

import (
	"context"
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// The event loop's side of HTTP/2: a connection the loop drives as a
// protocol.Mux, on the one HTTP/2 connection layer (h2conn.Fed). Over TLS
// the connection is opened in a goroutine (crypto/tls owns the handshake)
// and its records then go through memory (protocol.TLSMux).

var _ protocol.MuxOpener = (*Dialer)(nil)

// Sessions tells that an event loop can drive the connections, h2c and
// h2 over TLS.
func (d *Dialer) Sessions() bool { return true }

// Socket starts an h2c connection for an event loop (see
// protocol.Target).
func (d *Dialer) Socket() (int, error) { return d.sock.Socket() }

// Opens tells that connections over TLS are opened by Open.
func (d *Dialer) Opens() bool { return d.t.tls }

// Open opens a connection over TLS for an event loop.
func (d *Dialer) Open(ctx context.Context, slots int) (int, protocol.Mux, error) {
	fd, lt, err := d.core.OpenTLS(ctx)
	if err != nil {
		return -1, nil, d.explain(err)
	}
	return fd, protocol.TLSMux(d.Mux(slots), lt), nil
}

// Mux returns the state of one connection an event loop drives, for slots
// requests at once.
func (d *Dialer) Mux(slots int) protocol.Mux {
	m := &mux{Fed: d.core.Fed(slots, d.t.body), bodies: d.t.bodies, ok: &d.t.ok}
	if d.t.renders != nil {
		m.renders, m.vars = d.t.renders, d.vars
		m.pick, m.bufs, m.drawn = make([]int, slots), make([][]byte, slots), make([]bool, slots)
	}
	return m
}

// mux is the Fed in the engine's terms: its results as Outcomes.
type mux struct {
	*h2conn.Fed
	bodies [][]byte            // a request mix's, by request; nil without one
	ok     *protocol.StatusSet // the Dialer's: the statuses of a success
	// Fields (nil without): what each request renders, their values; by
	// slot, its request, its body rendered, and whether its values are
	// drawn (a Start the stream limit put off keeps them).
	renders []*render
	vars    *protocol.Vars
	pick    []int
	bufs    [][]byte
	drawn   []bool
}

var _ protocol.MuxPicker = (*mux)(nil)

// Pick makes request i of the Dialer's mix what slot k's next Start
// sends (protocol.MuxPicker).
func (m *mux) Pick(k, i int) {
	m.Fed.Pick(k, i, m.bodies[i])
	if m.pick != nil {
		m.pick[k] = i
	}
}

// t0body is slot k's request's own body (before rendering).
func (m *mux) t0body(k int) []byte {
	if m.bodies != nil {
		return m.bodies[m.pick[k]]
	}
	return m.Body()
}

var errPeerClosed = errors.New("connection closed by the server")

func (m *mux) Fail(class protocol.ErrClass) []int32 { return m.Fed.Fail(class, errPeerClosed) }

func (m *mux) Start(k int) (int, protocol.Outcome) {
	if m.renders != nil && !m.drawn[k] {
		if r := m.renders[m.pick[k]]; r != nil {
			body := m.t0body(k)
			var d protocol.Draw
			d, m.bufs[k], body = r.draw(m.vars, m.bufs[k], body)
			m.Fed.SetDraw(k, d, body)
			m.drawn[k] = true
		}
	}
	how, r := m.Fed.Start(k)
	if how != h2conn.Later && m.drawn != nil {
		m.drawn[k] = false
	}
	switch how {
	case h2conn.Started:
		return protocol.MuxStarted, protocol.Outcome{}
	case h2conn.Later:
		return protocol.MuxLater, protocol.Outcome{}
	default:
		return protocol.MuxRefused, outcome(r, m.ok)
	}
}

func (m *mux) Outcome(k int) protocol.Outcome { return outcome(m.Fed.Result(k), m.ok) }

func (m *mux) Cancel(k int) protocol.Outcome {
	o := outcome(m.Fed.Cancel(k), m.ok)
	o.Err = protocol.Timeout
	return o
}
