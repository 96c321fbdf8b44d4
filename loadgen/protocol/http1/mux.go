package http1

import (
	"context"
	"net"

	"loadgen/loadgen/protocol"
)

// HTTP/1.1 over TLS on an event loop. crypto/tls runs its handshake in a
// goroutine (Open); then the loop owns the socket and the records go
// through memory (protocol.TLSMux), over a one-slot Mux that is the same
// Session as plain HTTP/1.1's: the same request bytes, the same parser.

var (
	_ protocol.MuxOpener = (*Dialer)(nil)
	_ protocol.MuxPicker = (*mux)(nil)
)

// Opens tells that connections over TLS are opened by Open.
func (d *Dialer) Opens() bool { return d.tls != nil }

// Open connects and does the TLS handshake within ctx (and the dial
// timeout), then hands the socket over with its Mux.
func (d *Dialer) Open(ctx context.Context, _ int) (int, protocol.Mux, error) {
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", d.target.DialAddr())
	if err != nil {
		return -1, nil, err
	}
	lt := protocol.LoopTLSClient(raw, d.tls)
	if err := d.handshake(ctx, lt.Conn); err != nil {
		raw.Close()
		lt.Release()
		return -1, nil, err
	}
	fd, err := lt.Handoff()
	if err != nil {
		raw.Close()
		lt.Release()
		return -1, nil, err
	}
	return fd, protocol.TLSMux(d.Mux(1), lt), nil
}

// Mux returns the state of one connection a loop drives over TLS: one
// request at a time.
func (d *Dialer) Mux(int) protocol.Mux {
	m := &mux{s: d.Session()}
	m.done = m.slot[:0]
	return m
}

// muxReadSize is the plaintext one read of a response takes (the Session
// keeps what it needs of a header cut between reads).
const muxReadSize = 16 << 10

// plaintext lends a connection its read buffer from ReadBuf to Filled,
// so that one waiting for its answer holds none.
var plaintext = protocol.NewBuffers(muxReadSize)

// mux is a Session as a one-slot protocol.Mux.
type mux struct {
	s       protocol.Session
	rbuf    []byte // borrowed (plaintext) from ReadBuf to Filled
	req     []byte
	wrote   int
	read    int64
	busy    bool // a request is in flight
	closing bool // the last response said the connection takes no more
	dead    bool
	o       protocol.Outcome
	slot    [1]int32
	done    []int32
}

func (m *mux) Output() []byte {
	if !m.busy {
		return nil
	}
	return m.req[m.wrote:]
}

func (m *mux) Wrote(n int)     { m.wrote += n }
func (m *mux) Ready() bool     { return true }
func (m *mux) Usable() bool    { return !m.dead && !m.closing }
func (m *mux) Dead() bool      { return m.dead }
func (m *mux) Goodbye() []byte { return nil }

// ReadBuf lends the connection a buffer until Filled or Fail.
func (m *mux) ReadBuf() []byte {
	if m.rbuf == nil {
		m.rbuf = plaintext.Get()[:muxReadSize]
	}
	return m.rbuf
}

// giveBack returns the read buffer: what was read is parsed.
func (m *mux) giveBack() {
	if m.rbuf != nil {
		plaintext.Put(m.rbuf)
		m.rbuf = nil
	}
}

func (m *mux) Outcome(int) protocol.Outcome { return m.o }

// Filled parses what was read: the request ends with its response. Bytes
// past it, or with no request in flight, break the connection (HTTP/1.1
// sends one response per request).
func (m *mux) Filled(n int) []int32 {
	defer m.giveBack()
	m.done = m.done[:0]
	if !m.busy {
		m.dead = m.dead || n > 0
		return m.done
	}
	m.read += int64(n)
	used, done, o := m.s.Response(m.rbuf[:n])
	if !done {
		return m.done
	}
	if used < n {
		o.Err, o.Done = protocol.Protocol, true
	}
	return m.end(o)
}

// Fail ends the request in flight: the peer's close completes a response
// delimited by it (Session.Closed), a socket error fails it.
func (m *mux) Fail(class protocol.ErrClass) []int32 {
	m.giveBack()
	m.done = m.done[:0]
	m.dead = true
	if !m.busy {
		return m.done
	}
	o := protocol.Outcome{Err: class, Done: true}
	if class == protocol.Read {
		o = m.s.Closed()
	}
	return m.end(o)
}

func (m *mux) end(o protocol.Outcome) []int32 {
	o.Bytes = max(o.Bytes, m.read)
	o.Written = max(o.Written, int64(m.wrote))
	m.o, m.busy = o, false
	if o.Done {
		m.closing = true
		m.dead = m.dead || o.Err != protocol.None && o.Err != protocol.Status
	}
	m.done = append(m.done, 0)
	return m.done
}

// Pick picks the next request (protocol.MuxPicker): one slot.
func (m *mux) Pick(_, i int) { m.s.(*session).Pick(i) }

func (m *mux) Start(int) (int, protocol.Outcome) {
	if !m.Usable() {
		return protocol.MuxRefused, protocol.Outcome{Err: protocol.Write, Done: true, Unsent: true}
	}
	m.req, m.wrote, m.read, m.busy = m.s.Request(), 0, 0, true
	return protocol.MuxStarted, protocol.Outcome{}
}

// Cancel closes the connection: a request past its deadline cannot be taken
// back on HTTP/1.1; the connection goes with it.
func (m *mux) Cancel(int) protocol.Outcome {
	m.busy, m.dead = false, true
	return protocol.Outcome{Err: protocol.Timeout, Done: true, Bytes: m.read, Written: int64(m.wrote)}
}
