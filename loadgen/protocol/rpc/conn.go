package rpc

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
)

// conn is what unary and stream Conns share: a reference on a connection,
// the stream, and one way to abort whatever the Conn is doing. Close (from
// any goroutine), the end of the run's context and the deadline timer all
// cancel the Conn's own context, which every wait of a Do watches.
//
// A Conn has one call in flight at most, so its own context serves as the
// call's: a deadline costs a timer reset, not a context and a timer per
// call. A call past its deadline is reset (RST_STREAM) and ends the Conn
// (the engine drops a timed-out connection anyway). The deadline is not
// sent to the server as grpc-timeout.
type conn struct {
	d       *Dialer
	t       atomic.Pointer[transport] // only Do (rehome) changes it, under mu
	st      stream
	dead    context.Context // done when the Conn is aborted
	kill    context.CancelFunc
	timer   *time.Timer // aborts at a Do's deadline; stopped between Dos
	expired atomic.Bool // the timer fired
	sending atomic.Bool // a send is waiting for or holding the write lock
	written int64       // request bytes per Do: prefix and message

	runLink // its mu also guards changes of t against Close
}

// runLink ties a Conn to the run's context, whose end aborts the Conn, and
// marks the Conn closed. Both clients' Conns embed it.
type runLink struct {
	linked context.Context // the run context that aborts the Conn; only Do writes it
	mu     sync.Mutex      // guards unlink against Close
	unlink func() bool
	closed atomic.Bool
}

// link makes the end of ctx (the run's context, the same for every Do)
// call abort. It allocates once per Conn and run context.
func (l *runLink) link(ctx context.Context, abort func()) {
	l.linked = ctx
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlink != nil {
		l.unlink()
	}
	if !l.closed.Load() {
		l.unlink = context.AfterFunc(ctx, abort)
	}
}

// unlinkLocked, under mu, when the Conn is closed: the run's context no
// longer aborts it.
func (l *runLink) unlinkLocked() {
	if l.unlink != nil {
		l.unlink()
		l.unlink = nil
	}
}

func (c *conn) init(d *Dialer, t *transport) {
	c.d = d
	c.t.Store(t)
	c.st.done = make(chan struct{}, 1)
	c.st.check = d.check
	c.dead, c.kill = context.WithCancel(context.Background())
	c.written = int64(len(d.req))
	c.timer = time.AfterFunc(math.MaxInt64, func() {
		c.expired.Store(true)
		c.abort()
	})
	c.timer.Stop()
}

// abort ends what the Conn is doing. A write stuck because the peer does
// not read is cut by a past write deadline, which kills the connection.
func (c *conn) abort() {
	c.kill()
	if c.sending.Load() {
		c.t.Load().nc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// start begins a Do: it links the run's context, checks the Conn is usable
// and arms the deadline timer. ok false means return o.
func (c *conn) start(ctx context.Context, deadline time.Time) (o protocol.Outcome, ok bool) {
	if ctx != c.linked {
		c.link(ctx, c.abort)
	}
	if c.dead.Err() != nil { // closed, timed out before, or the run is over
		return protocol.Outcome{Err: protocol.Read, Done: true}, false
	}
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return protocol.Outcome{Err: protocol.Timeout}, false
		}
		c.timer.Reset(d)
	}
	return o, true
}

// stop disarms the deadline timer; fired reports it fired first.
func (c *conn) stop(deadline time.Time) (fired bool) {
	return !deadline.IsZero() && !c.timer.Stop()
}

// aborted is the outcome of a Do cut short: the stream is reset and the
// Conn is done.
func (c *conn) aborted() protocol.Outcome {
	c.t.Load().cancel(&c.st)
	if c.expired.Load() {
		return protocol.Outcome{Err: protocol.Timeout, Done: true, Written: c.written}
	}
	return protocol.Outcome{Err: protocol.Read, Done: true, Written: c.written}
}

// Close aborts what the Conn is doing, resets its stream and releases the
// connection, closing it with its last Conn. It is safe to call more than
// once and from another goroutine than Do's.
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.abort()
	c.timer.Stop()
	c.mu.Lock()
	c.unlinkLocked()
	t := c.t.Load()
	c.mu.Unlock()
	t.cancel(&c.st)
	c.d.conns.release(t, false)
	return nil
}

// rehome moves the Conn to a connection that takes new streams, when its
// own is going away (GOAWAY): a request not sent yet is not failed for it,
// as grpc-go retries such requests transparently. The dial is part of the
// request's time, bounded by its deadline.
func (c *conn) rehome(deadline time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.d.s.DialTimeout)
	defer cancel()
	if !deadline.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	stop := context.AfterFunc(c.dead, cancel)
	defer stop()
	t, err := c.d.conns.attach(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		c.d.conns.release(t, false)
		return errAborted
	}
	old := c.t.Swap(t)
	c.mu.Unlock()
	c.d.conns.release(old, true)
	return nil
}

// wait waits until the stream ended (unary) or has a message (ping-pong),
// or the Conn is aborted (false).
func (c *conn) wait(message bool) bool {
	st, t := &c.st, c.t.Load()
	for {
		select {
		case <-st.done:
		case <-c.dead.Done():
			return false
		}
		t.mu.Lock()
		ready := st.ended || (message && st.msgs > 0)
		t.mu.Unlock()
		if ready {
			return true
		}
	}
}

// outcome reads the stream's result (under transport.mu): a message taken
// (ping-pong), or how the stream ended.
func (c *conn) outcome(unary bool) protocol.Outcome {
	st := &c.st
	o := protocol.Outcome{Written: c.written}
	if !unary && st.msgs > 0 { // a reply: take it
		if st.verdict != replyOK || st.msgs > 1 { // more replies than requests, too
			o.Err = protocol.Protocol
		}
		st.msgs--
		o.Bytes, st.bytes = st.bytes, 0
		st.verdict = replyOK
		return o
	}
	o.Bytes = st.bytes
	o.Status = 14 // Unavailable, unless the peer said otherwise
	switch {
	case st.connErr != nil:
		o.Err, o.Done = protocol.Read, true
	case st.refused:
		o.Err, o.Done = protocol.Read, true // GOAWAY: not processed, the connection is going
	case st.rst:
		o.Status = rstToCode(st.rstCode)
		o.Err = protocol.Status
		if st.rstCode == http2.ErrCodeProtocol || st.rstCode == http2.ErrCodeCompression || st.rstCode == http2.ErrCodeFlowControl {
			o.Err = protocol.Protocol
		}
	case !st.headers:
		o.Status = 13 // Internal
		o.Err = protocol.Protocol
	case st.httpStatus != 200 && st.grpcStatus < 0:
		o.Status = httpToCode(st.httpStatus)
		o.Err = protocol.Status // a proxy's error page
	case !st.grpc || st.grpcStatus < 0:
		o.Status = 13
		o.Err = protocol.Protocol // not a gRPC answer, or no trailers
	case st.grpcStatus != 0:
		o.Status = st.grpcStatus
		o.Err = protocol.Status
		if o.Status == 4 { // DeadlineExceeded, from the server or a proxy
			o.Err = protocol.Timeout
		}
	case !unary:
		o.Status = 0
		o.Err = protocol.Read // the server ended the stream without a reply
	case st.msgs != 1:
		o.Status = 0
		o.Err = protocol.Protocol // a unary call answers one message
	default:
		o.Status = 0
		switch st.verdict {
		case replyBad:
			o.Err = protocol.Protocol
		case replyNotServing:
			o.Err = protocol.Status // the call worked; the server is not serving
		}
	}
	return o
}

// rstToCode maps a stream reset to a gRPC code, as grpc-go does.
func rstToCode(code http2.ErrCode) int32 {
	switch code {
	case http2.ErrCodeRefusedStream:
		return 14 // Unavailable
	case http2.ErrCodeCancel:
		return 1 // Canceled
	case http2.ErrCodeEnhanceYourCalm:
		return 8 // ResourceExhausted
	case http2.ErrCodeInadequateSecurity:
		return 7 // PermissionDenied
	}
	return 13 // Internal
}
