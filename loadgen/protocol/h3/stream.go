package h3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"loadgen/loadgen/protocol"
)

// stream is a protocol.Conn: one of the Streams Conns sharing a QUIC
// connection, one request (one QUIC stream) at a time.
type stream struct {
	d      *Dialer
	c      *qconn
	abort  context.Context // cancelled by Close: ends a Do in progress
	cancel context.CancelFunc
	closed atomic.Bool
	// wrote tells that the request's header went out (the trace's
	// WroteHeaders): a request that failed before is unsent.
	wrote atomic.Bool
	trace *httptrace.ClientTrace
}

// Do sends one request on a new QUIC stream and reads the whole response.
func (s *stream) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if s.closed.Load() {
		return protocol.Outcome{Err: protocol.Read, Done: true}
	}
	s.wrote.Store(false)
	base := httptrace.WithClientTrace(s.abort, s.trace)
	rctx, cancel := context.WithCancel(base)
	if !deadline.IsZero() {
		rctx, cancel = context.WithDeadline(base, deadline)
	}
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()

	t := s.d.t
	tmpl := t.req
	if s.c.early {
		tmpl = t.early
	}
	req := tmpl.WithContext(rctx)
	o := protocol.Outcome{Written: int64(len(t.body))}
	if len(t.body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(t.body))
	}
	resp, err := s.c.cc.RoundTrip(req)
	if err == nil {
		o.Status = int32(resp.StatusCode)
		o.Bytes, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	switch {
	case err != nil:
		s.fail(&o, ctx, rctx, err)
	case t.ok.Failed(resp.StatusCode):
		o.Err = protocol.Status
	}
	return o
}

// fail classifies err, a request's failure (see the package documentation).
func (s *stream) fail(o *protocol.Outcome, run, req context.Context, err error) {
	var se *quic.StreamError
	var he *http3.Error
	switch {
	case s.closed.Load():
		o.Err, o.Done = protocol.Read, true
	case run.Err() != nil, req.Err() != nil:
		o.Err = protocol.Timeout
	case errors.Is(err, quic.Err0RTTRejected):
		// not processed: sent again on a connection without 0-RTT
		s.d.rejected.Store(true)
		s.c.dead.Store(true)
		o.Err, o.Done, o.Unsent = protocol.Read, true, true
	case !s.wrote.Load():
		// No stream opened, or no header sent on it: the connection is
		// closed or going away (GOAWAY). The request was not processed:
		// the engine sends it again on a new connection.
		s.c.dead.Store(true)
		o.Err, o.Done, o.Unsent = protocol.Read, true, true
	case s.c.conn.Context().Err() != nil:
		s.c.dead.Store(true)
		o.Err, o.Done = protocol.Read, true
	case errors.As(err, &se) && se.Remote:
		o.Err = protocol.Read
		if http3.ErrCode(se.ErrorCode) == http3.ErrCodeRequestRejected {
			o.Unsent, o.Done = true, true // not processed: sent again
		}
	case errors.As(err, &he) && !he.Remote:
		o.Err = protocol.Protocol // the server broke HTTP/3 on the stream
	default:
		// the stream could not be opened or the connection failed
		s.c.dead.Store(true)
		o.Err, o.Done = protocol.Read, true
	}
}

// Close ends the Conn's request, if any; the last Close of a connection
// closes it. It may run concurrently with Do, which then returns promptly.
// It is idempotent.
func (s *stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.d.release(s.c)
	return nil
}
