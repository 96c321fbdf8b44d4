package rpc

import (
	"context"
	"errors"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
)

// conn is what unary and stream Conns share: a stream on a connection and
// the reply the connection hands it (as its h2conn.Handler).
//
// A call past its deadline is reset (RST_STREAM) and ends the Conn (the
// engine drops a timed-out connection anyway). The deadline is not sent
// to the server as grpc-timeout.
type conn struct {
	d     *Dialer
	s     *h2conn.Stream
	reply reply
}

var errGoingAway = errors.New("the connection is going away")

// init dials the Conn's stream.
func (c *conn) init(ctx context.Context, d *Dialer, unary bool) error {
	c.d = d
	c.reply = reply{check: d.check, unary: unary, many: d.s.Mode == ServerStream, written: int64(len(d.body))}
	c.reply.reset()
	s, err := d.core.Dial(ctx, &c.reply)
	if err != nil {
		return d.explain(err)
	}
	c.s = s
	return nil
}

// Close aborts what the Conn is doing, resets its stream and releases the
// connection, closing it with its last Conn. It is safe to call more than
// once and from another goroutine than Do's.
func (c *conn) Close() error { return c.s.Close() }

// reply is a call's response as the connection hands it over (an
// h2conn.Handler: its methods run under the connection's lock), and the
// outcome Settle makes of it for Do.
type reply struct {
	check   replyCheck
	unary   bool                 // a call per stream: the stream ends the reply
	many    bool                 // and it is a stream of messages (server streaming)
	sink    protocol.MessageSink // told of each message of a stream (many); nil: none
	written int64                // request bytes per Do: prefixes and messages

	pending responseFields // the header block being decoded

	headers    bool // the response headers came
	httpStatus int
	grpc       bool  // content-type application/grpc…
	grpcStatus int32 // -1 until trailers (or a trailers-only response) say
	mr         msgReader
	msgs       int   // complete messages not taken yet
	bytes      int64 // their bytes, prefixes included
	verdict    verdict

	o protocol.Outcome // Settle's, for Do
}

// reset readies the reply for a new stream.
func (r *reply) reset() {
	r.pending.reset()
	r.headers, r.httpStatus, r.grpc, r.grpcStatus = false, 0, false, -1
	r.mr.reset()
	r.msgs, r.bytes, r.verdict = 0, 0, replyOK
}

func (r *reply) Field(name int, value []byte) { r.pending.add(name+1, value) }

func (r *reply) Block(kind h2conn.BlockKind, status int32) {
	f := &r.pending
	switch kind {
	case h2conn.BlockHeaders:
		r.headers, r.httpStatus, r.grpc = true, int(status), f.grpc
		if f.grpcStatus >= 0 { // trailers-only: the status is in these headers
			r.grpcStatus = f.grpcStatus
		}
	case h2conn.BlockTrailers:
		r.grpcStatus = f.grpcStatus
	}
	f.reset()
}

func (r *reply) Data(p []byte) {
	if !r.headers || r.httpStatus != 200 || !r.grpc {
		r.bytes += int64(len(p)) // not gRPC: only counted
		return
	}
	for len(p) > 0 {
		k, complete := r.mr.feed(p)
		p = p[k:]
		if complete {
			m := &r.mr
			v := replyBad
			if !m.bad {
				v = r.check.check(m.head[:m.nh], m.size)
			}
			r.msgs++
			r.bytes += int64(prefixLen + m.size)
			r.verdict = max(r.verdict, v)
			if r.sink != nil {
				r.sink.Message(time.Now())
			}
		}
	}
}

func (r *reply) Ready() bool { return r.msgs > 0 }

// Settle makes the outcome of the request's wait.
func (r *reply) Settle(res h2conn.Result) {
	o := protocol.Outcome{Done: res.Done}
	if res.Written > 0 {
		o.Written = r.written
	}
	switch res.End {
	case h2conn.Deadline:
		o.Err, o.Done = protocol.Timeout, true
	case h2conn.Canceled, h2conn.Closed: // the run is over, or Close
		o.Err, o.Done = protocol.Read, true
	case h2conn.Failed:
		o.Status, o.Err, o.Done, o.Unsent = 14, res.ConnErr, true, res.Unsent // Unavailable
	default:
		o = r.outcome(res, o)
	}
	r.o = o
}

// outcome reads a satisfied wait: a message taken (ping-pong), or how the
// stream ended.
func (r *reply) outcome(res h2conn.Result, o protocol.Outcome) protocol.Outcome {
	if !r.unary && r.msgs > 0 { // a reply: take it
		if r.verdict != replyOK || r.msgs > 1 { // more replies than requests, too
			o.Err = protocol.Protocol
		}
		r.msgs--
		o.Bytes, r.bytes = r.bytes, 0
		r.verdict = replyOK
		o.Done = o.Done || res.Finished || o.Err != protocol.None
		return o
	}
	o.Bytes = r.bytes
	o.Status = 14 // Unavailable, unless the peer said otherwise
	o.Done = o.Done || !r.unary
	switch {
	case res.Unsent:
		o.Err, o.Done, o.Unsent = protocol.Read, true, true // GOAWAY: not processed (RFC 9113 §8.7)
	case res.Reset:
		o.Status = rstToCode(res.Code)
		o.Err = protocol.Status
		if res.Code == http2.ErrCodeProtocol || res.Code == http2.ErrCodeCompression || res.Code == http2.ErrCodeFlowControl {
			o.Err = protocol.Protocol
		}
	case res.Malformed, !r.headers: // not HTTP/2's message rules: the stream was reset (RFC 9113 §8.1.1)
		o.Status = 13 // Internal
		o.Err = protocol.Protocol
	case r.httpStatus != 200 && r.grpcStatus < 0:
		o.Status = httpToCode(r.httpStatus)
		o.Err = protocol.Status // a proxy's error page
	case !r.grpc || r.grpcStatus < 0:
		o.Status = 13
		o.Err = protocol.Protocol // not a gRPC answer, or no trailers
	case r.grpcStatus != 0:
		o.Status = r.grpcStatus
		o.Err = protocol.Status
		if o.Status == 4 { // DeadlineExceeded, from the server or a proxy
			o.Err = protocol.Timeout
		}
	case !r.unary:
		o.Status = 0
		o.Err = protocol.Read // the server ended the stream without a reply
	case r.msgs != 1 && !r.many:
		o.Status = 0
		o.Err = protocol.Protocol // a unary call answers one message
	default:
		o.Status = 0
		switch r.verdict {
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
