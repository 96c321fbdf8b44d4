package rpc

import (
	"context"
	"time"

	"loadgen/loadgen/protocol"
)

// unaryConn makes one unary call per Do, each on a new stream of its
// connection.
type unaryConn struct {
	conn
}

func newUnaryConn(d *Dialer, t *transport) *unaryConn {
	c := &unaryConn{}
	c.init(d, t)
	return c
}

// Do makes one call with the prebuilt request: the headers and the message
// in one write, then the wait for the reply and the trailers. A call the
// server refused unprocessed because its connection is going away (GOAWAY)
// is made again on another connection, once.
func (c *unaryConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if o, ok := c.start(ctx, deadline); !ok {
		return o
	}
	for attempt := 0; ; attempt++ {
		t := c.t.Load()
		err := t.send(&c.st, true, c.d.req, true, c.dead.Done(), &c.sending)
		if err == nil && !c.wait(false) {
			err = errAborted
		}
		var o protocol.Outcome
		if err == nil {
			t.mu.Lock()
			o = c.outcome(true)
			refused := c.st.refused
			t.mu.Unlock()
			if !refused {
				if c.stop(deadline) { // the deadline came with the reply: the Conn is aborted
					o.Done = true
				}
				return o
			}
			err = errGoingAway
		}
		if err == errGoingAway && attempt == 0 && c.dead.Err() == nil {
			if err = c.rehome(deadline); err == nil {
				continue
			}
			if err != errAborted && c.dead.Err() == nil {
				c.stop(deadline)
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					return protocol.Outcome{Err: protocol.Timeout, Done: true}
				}
				return protocol.Outcome{Err: protocol.Connect, Done: true} // no other connection
			}
		}
		c.stop(deadline)
		if err == errAborted || c.dead.Err() != nil {
			return c.aborted()
		}
		// The connection failed, or is going away a second time.
		return protocol.Outcome{Status: 14, Err: protocol.Read, Done: true, Written: c.written}
	}
}
