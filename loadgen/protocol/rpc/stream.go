package rpc

import (
	"context"
	"errors"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// streamConn owns one ping-pong stream: each Do sends one message and reads
// its reply, so exactly one message is in flight. When the stream ends or
// fails the Conn is done: the engine dials again, which opens a new stream.
type streamConn struct {
	conn
}

// open opens the Conn's stream (its headers go out now); ctx bounds the
// wait for a stream slot.
func (c *streamConn) open(ctx context.Context) error {
	dl, _ := ctx.Deadline()
	r := c.s.Request(ctx, dl, nil, false, h2conn.WaitNone)
	switch {
	case r.Unsent:
		return errGoingAway
	case r.End == h2conn.Failed:
		return c.s.Conn().Err()
	case r.End != h2conn.Satisfied:
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("aborted")
	}
	return nil
}

// Do sends one message and waits for its reply, until the deadline: past
// it the stream is reset (a gRPC stream has no per-message deadline), Do
// returns Timeout and the Conn is done.
func (c *streamConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	r := c.s.Send(ctx, deadline, c.d.req, false, h2conn.WaitMessage)
	o := c.reply.o
	if o.Done && !r.Finished {
		c.s.Cancel()
	}
	return o
}
