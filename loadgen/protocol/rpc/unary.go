package rpc

import (
	"context"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// unaryConn makes one call per Do, each on a new stream of its
// connection: a unary call, a server-streaming one (one message out, the
// reply's messages told to its MessageSink as they come) or a
// client-streaming one (Messages out, one back).
type unaryConn struct {
	conn
}

var _ protocol.MessageConn = (*unaryConn)(nil)

// SetMessageSink makes sink the one told of each message of a
// server-streaming reply.
func (c *unaryConn) SetMessageSink(sink protocol.MessageSink) { c.reply.sink = sink }

// Do makes one call with the prebuilt request: the headers and the message
// in one write, then the wait for the reply and the trailers. A call the
// connection could not send (GOAWAY, stream IDs used up), or that the
// server's GOAWAY says it did not process, is Unsent and Done: the engine
// sends it again on a new connection, outside the call's time.
func (c *unaryConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	c.reply.reset()
	c.s.Request(ctx, deadline, c.d.body, true, h2conn.WaitEnd)
	return c.reply.o
}
