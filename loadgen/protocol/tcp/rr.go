package tcp

import (
	"context"
	"net"
	"sync"
	"time"

	"loadgen/loadgen/protocol"
)

const (
	// pipelineAbove is the request size past which the request is written
	// while the response is read: an echo answers as it reads, so a request
	// bigger than the socket buffers on the way there and back would
	// otherwise block both sides. Below it, one write then one read.
	pipelineAbove = 64 << 10
	// readBufMax bounds a connection's read buffer; bigger responses are
	// read in chunks of this size and dropped.
	readBufMax = 256 << 10
)

func readBuf(size int) []byte { return make([]byte, min(size, readBufMax)) }

// rrConn is a tcp-rr connection: write the request, read as many bytes
// back.
type rrConn struct {
	sock
	payload []byte
	buf     []byte

	// Requests past pipelineAbove are written by a goroutine of the
	// connection's own, started at Dial, so that Do reads meanwhile.
	kick     chan struct{}
	written  chan writeResult
	quit     chan struct{}
	quitOnce sync.Once
}

type writeResult struct {
	n   int
	err error
}

func newRRConn(c net.Conn, payload []byte) *rrConn {
	rc := &rrConn{sock: sock{c: c}, payload: payload, buf: readBuf(len(payload))}
	if len(payload) > pipelineAbove {
		rc.kick = make(chan struct{}, 1)
		rc.written = make(chan writeResult, 1)
		rc.quit = make(chan struct{})
		go rc.writer()
	}
	return rc
}

// Do writes one request and reads the response. A failure leaves the
// connection unusable (Done).
func (c *rrConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if !c.begin(ctx, deadline) {
		return protocol.Outcome{Err: protocol.Timeout, Done: true}
	}
	if c.kick != nil {
		return c.doPipelined(ctx)
	}
	w, err := c.c.Write(c.payload)
	if err != nil {
		return protocol.Outcome{Err: classify(ctx, err, protocol.Write), Done: true, Written: int64(w)}
	}
	r, err := readFull(c.c, c.buf, len(c.payload))
	if err != nil {
		return protocol.Outcome{Err: classify(ctx, err, protocol.Read), Done: true, Bytes: r, Written: int64(w)}
	}
	return protocol.Outcome{Bytes: r, Written: int64(w)}
}

func (c *rrConn) doPipelined(ctx context.Context) protocol.Outcome {
	c.kick <- struct{}{}
	r, rerr := readFull(c.c, c.buf, len(c.payload))
	if rerr != nil {
		c.abort() // the connection is lost: do not wait for the writer to block
	}
	var w writeResult
	select {
	case w = <-c.written:
	case <-c.quit:
		w.err = net.ErrClosed
	}
	out := protocol.Outcome{Bytes: r, Written: int64(w.n)}
	switch {
	case rerr != nil:
		out.Err, out.Done = classify(ctx, rerr, protocol.Read), true
	case w.err != nil:
		out.Err, out.Done = classify(ctx, w.err, protocol.Write), true
	}
	return out
}

func (c *rrConn) writer() {
	for {
		select {
		case <-c.quit:
			return
		case <-c.kick:
			n, err := c.c.Write(c.payload)
			c.written <- writeResult{n, err}
		}
	}
}

// Close closes the connection, aborting a Do in progress. It is safe to
// call more than once and concurrently with Do.
func (c *rrConn) Close() error {
	err := c.close()
	if c.quit != nil {
		c.quitOnce.Do(func() { close(c.quit) })
	}
	return err
}
