package h2

import (
	"context"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// stream is a protocol.Conn: one of the Streams Conns sharing a
// connection, one request (one HTTP/2 stream) at a time.
type stream struct {
	s      *h2conn.Stream
	body   []byte
	bodies [][]byte            // a request mix's, by request; nil without one
	ok     *protocol.StatusSet // the Dialer's: the statuses of a success
	// Fields: what the current request renders (nil: nothing varies),
	// the Dialer's by request, its values, and the body rendered.
	render  *render
	renders []*render
	vars    *protocol.Vars
	buf     []byte
}

var (
	_ protocol.Conn   = (*stream)(nil)
	_ protocol.Picker = (*stream)(nil)
)

// Pick makes request i of the Dialer's mix the one Do sends
// (protocol.Picker).
func (c *stream) Pick(i int) {
	c.body = c.bodies[i]
	if c.renders != nil {
		c.render = c.renders[i]
	}
	c.s.Pick(i)
}

// Do sends one request on a new stream and reads the whole response.
func (c *stream) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	body := c.body
	if c.render != nil {
		var d protocol.Draw
		d, c.buf, body = c.render.draw(c.vars, c.buf, body)
		c.s.SetDraw(d, len(body))
	}
	return outcome(c.s.Request(ctx, deadline, body, true, h2conn.WaitEnd), c.ok)
}

// outcome applies the package's rules (see the package documentation);
// ok are the statuses of a success.
func outcome(r h2conn.Result, ok *protocol.StatusSet) protocol.Outcome {
	o := protocol.Outcome{Status: r.Status, Bytes: r.Read, Written: r.Written, Done: r.Done, Unsent: r.Unsent}
	switch r.End {
	case h2conn.Deadline, h2conn.Canceled:
		o.Err = protocol.Timeout
	case h2conn.Closed:
		o.Err = protocol.Read
	case h2conn.Failed:
		o.Err = r.ConnErr
	default:
		switch {
		case r.Unsent: // above the GOAWAY's last stream
			o.Err = protocol.Read
		case r.Malformed, r.Reset && r.Code == http2.ErrCodeProtocol:
			o.Err = protocol.Protocol
		case r.Reset:
			o.Err = protocol.Read
		case ok.Failed(int(r.Status)):
			o.Err = protocol.Status
		}
	}
	return o
}

// Close ends the stream's request, if any, and detaches it; the last Close
// of a connection closes it. It may run concurrently with Do, which then
// returns promptly. It is idempotent.
func (c *stream) Close() error { return c.s.Close() }
