package tcp

import (
	"context"
	"net"
	"sync"
	"time"

	"loadgen/loadgen/protocol"
)

// crrConn is a tcp-crr "connection": it holds no socket between requests.
// Each Do connects, writes the request, reads the response and closes, so
// the engine times all four.
type crrConn struct {
	d   *Dialer
	buf []byte

	// The last Do's connect, for LastConnect; only Do writes them.
	tried       bool
	connectedAt time.Time

	mu     sync.Mutex // guards the fields below against Close
	cancel context.CancelFunc
	sock   net.Conn
	closed bool
}

func newCRRConn(d *Dialer) *crrConn {
	return &crrConn{d: d, buf: readBuf(len(d.payload))}
}

// Do makes one connection and one request/response on it. Failures do not
// make the Conn Done: the next Do connects afresh anyway.
func (c *crrConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	c.tried, c.connectedAt = false, time.Time{}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !c.enter(cancel) {
		return protocol.Outcome{Err: protocol.Connect, Done: true}
	}
	start := time.Now()
	nc, err := c.d.connect(dctx, deadline)
	c.tried = true
	if err != nil {
		// A connect that ran out of the request's time is a connect
		// error, as the event loop counts it: the request failed because
		// it could not connect. A request the run's end (ctx) or a
		// deadline passed before the connect began cut short is a timeout.
		class := protocol.Connect
		if ctx.Err() != nil || !deadline.IsZero() && !start.Before(deadline) {
			class = protocol.Timeout
		}
		return protocol.Outcome{Err: class, Done: c.leave(nil)}
	}
	c.connectedAt = time.Now()
	if c.leave(nc) {
		nc.Close()
		return protocol.Outcome{Err: protocol.Connect, Done: true}
	}
	out := c.exchange(ctx, nc, deadline)
	c.mu.Lock()
	c.sock = nil
	out.Done = c.closed
	c.mu.Unlock()
	nc.Close()
	return out
}

// LastConnect reports the connect the last Do made: tried is false when it
// made none (the Conn was closed); at is when the connection was up, zero
// when the connect failed. The connect is part of each request, so the
// engine cannot see it the way it sees a Dial: its goroutines count it from
// here, as the event loop counts the connects it makes itself. Not safe
// for use concurrently with Do.
func (c *crrConn) LastConnect() (at time.Time, tried bool) {
	return c.connectedAt, c.tried
}

// enter records how Close may abort the connect about to start; it reports
// false when the Conn is closed.
func (c *crrConn) enter(cancel context.CancelFunc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancel = cancel
	return !c.closed
}

// leave records the connected socket (nil when the connect failed) for
// Close to abort; it reports whether the Conn was closed meanwhile.
func (c *crrConn) leave(nc net.Conn) (closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancel = nil
	if !c.closed {
		c.sock = nc
	}
	return c.closed
}

// exchange writes the request on nc and reads the response.
func (c *crrConn) exchange(ctx context.Context, nc net.Conn, deadline time.Time) protocol.Outcome {
	if !deadline.IsZero() {
		nc.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	defer stop()

	payload := c.d.payload
	if len(payload) <= pipelineAbove {
		w, err := nc.Write(payload)
		if err != nil {
			return protocol.Outcome{Err: classify(ctx, err, protocol.Write), Written: int64(w)}
		}
		r, err := readFull(nc, c.buf, len(payload))
		if err != nil {
			return protocol.Outcome{Err: classify(ctx, err, protocol.Read), Bytes: r, Written: int64(w)}
		}
		return protocol.Outcome{Bytes: r, Written: int64(w)}
	}

	// A big request is written while the response is read (see pipelineAbove).
	written := make(chan writeResult, 1)
	go func() {
		n, err := nc.Write(payload)
		written <- writeResult{n, err}
	}()
	r, rerr := readFull(nc, c.buf, len(payload))
	if rerr != nil {
		nc.SetDeadline(aLongTimeAgo)
	}
	w := <-written
	out := protocol.Outcome{Bytes: r, Written: int64(w.n)}
	switch {
	case rerr != nil:
		out.Err = classify(ctx, rerr, protocol.Read)
	case w.err != nil:
		out.Err = classify(ctx, w.err, protocol.Write)
	}
	return out
}

// Close aborts a Do in progress and makes later ones fail at once. It is
// safe to call more than once and concurrently with Do.
func (c *crrConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.sock != nil {
		c.sock.Close()
	} else if c.cancel != nil {
		c.cancel()
	}
	return nil
}
