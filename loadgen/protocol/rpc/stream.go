package rpc

import (
	"context"
	"fmt"
	"time"

	"loadgen/loadgen/protocol"
)

// streamConn owns one ping-pong stream: each Do sends one message and reads
// its reply, so exactly one message is in flight. When the stream ends or
// fails the Conn is done: the engine dials again, which opens a new stream.
type streamConn struct {
	conn
}

// newStreamConn opens the Conn's stream (its headers go out now); ctx
// bounds the wait for a stream slot.
func newStreamConn(ctx context.Context, d *Dialer, t *transport) (*streamConn, error) {
	c := &streamConn{}
	c.init(d, t)
	if err := t.send(&c.st, true, nil, false, ctx.Done(), &c.sending); err != nil {
		c.kill()
		if err == errAborted {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("grpc: opening a ping-pong stream on %s: %w", d.s.Target, err)
	}
	return c, nil
}

// Do sends one message and waits for its reply, until the deadline: past
// it the stream is reset (a gRPC stream has no per-message deadline), Do
// returns Timeout and the Conn is done.
func (c *streamConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if o, ok := c.start(ctx, deadline); !ok {
		return o
	}
	t := c.t.Load()
	err := t.send(&c.st, false, c.d.req, false, c.dead.Done(), &c.sending)
	if err == nil && !c.wait(true) {
		err = errAborted
	}
	fired := c.stop(deadline)
	switch {
	case err == errAborted:
		return c.aborted()
	case err != nil:
		return protocol.Outcome{Status: 14, Err: protocol.Read, Done: true, Written: c.written}
	}
	t.mu.Lock()
	o := c.outcome(false)
	ended := c.st.ended
	t.mu.Unlock()
	if fired || ended || o.Err != protocol.None {
		o.Done = true
		if !ended {
			t.cancel(&c.st)
		}
	}
	return o
}
