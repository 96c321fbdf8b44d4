package tcp

import (
	"context"
	"net"
	"time"

	"loadgen/loadgen/protocol"
)

// streamConn is a tcp-stream connection: each Do writes one chunk to a
// sink and reads nothing.
type streamConn struct {
	sock
	payload []byte
}

func newStreamConn(c net.Conn, payload []byte) *streamConn {
	return &streamConn{sock: sock{c: c}, payload: payload}
}

// Do writes one chunk. It returns when the kernel has taken all of it, so
// the engine's Written per second is the stream's throughput.
func (c *streamConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if !c.begin(ctx, deadline) {
		return protocol.Outcome{Err: protocol.Timeout, Done: true}
	}
	n, err := c.c.Write(c.payload)
	if err != nil {
		return protocol.Outcome{Err: classify(ctx, err, protocol.Write), Done: true, Written: int64(n)}
	}
	return protocol.Outcome{Written: int64(n)}
}

// Close closes the connection (the data already written still reaches the
// sink), aborting a Do in progress. It is safe to call more than once.
func (c *streamConn) Close() error {
	err := c.close()
	return err
}
