// Package proto defines what a protocol is to the engine: a Dialer that opens
// connections (or streams) and a Conn that executes one request at a time and
// returns an Outcome. The engine owns the clock: it times every Do, paces the
// requests and keeps the histograms. A protocol never measures latency.
//
// This package imports nothing else of loadgen; protocol packages import only
// this one.
package protocol

import (
	"context"
	"time"
)

// ErrClass classifies a failed request. The classes are wrk's socket-error
// classes plus Status (HTTP status >= 400, gRPC status != OK) and Protocol
// (the peer answered, but not in the protocol we speak).
type ErrClass uint8

const (
	None     ErrClass = iota // the request succeeded
	Connect                  // the connection (TCP connect, TLS handshake) failed
	Read                     // reading the response failed (reset, EOF, short read)
	Write                    // writing the request failed
	Timeout                  // the request did not complete before its deadline
	Status                   // the peer answered with an error status
	Protocol                 // the peer's answer could not be parsed
	NumErrClasses
)

var errClassNames = [NumErrClasses]string{"none", "connect", "read", "write", "timeout", "status", "protocol"}

// String returns the class name as used in reports and JSON ("timeout").
func (c ErrClass) String() string {
	if c < NumErrClasses {
		return errClassNames[c]
	}
	return "unknown"
}

// Outcome is what one request produced. It is a small value with no pointers,
// so returning it allocates nothing.
type Outcome struct {
	Status int32    // HTTP status, gRPC code, 0 for raw TCP
	Err    ErrClass // None when the request succeeded
	Done   bool     // the connection cannot carry another request: close it and dial anew
	// Unsent is set when the peer did not process the request — the
	// connection was going away (GOAWAY) before it was sent, or the server
	// refused it unprocessed (above the GOAWAY's last stream). It is not a
	// failure: the engine dials anew and sends it again, as real clients do.
	// Done is set too.
	Unsent  bool
	Bytes   int64 // bytes read from the peer for this request (headers included)
	Written int64 // bytes written to the peer for this request
}

// Dialer opens connections. It is shared by all workers and must be safe for
// concurrent use.
type Dialer interface {
	// Dial opens one connection (or one stream of a shared connection) ready
	// for Do. The context bounds the dial. A failed dial is a connect error.
	Dial(ctx context.Context) (Conn, error)
}

// Conn is one connection (or stream). Do and Close are called by one worker
// goroutine, except that Close may be called from another goroutine to abort
// a Do in progress; Do must then return promptly.
type Conn interface {
	// Do executes one request and returns its outcome. The request must not
	// outlive deadline (zero means none): past it, Do returns Err Timeout.
	// ctx is the run's context: it is cancelled when the run stops.
	// On the hot path Do must not allocate.
	Do(ctx context.Context, deadline time.Time) Outcome
	Close() error
}

// MessageSink is told of each message of a streamed response as it
// arrives: at is when it was read. The engine's, per Conn: it times the
// messages against the request's start.
type MessageSink interface {
	Message(at time.Time)
}

// MessageConn is a Conn whose answers are streams of messages (a gRPC
// server-streaming call). The engine gives it a sink once, before its
// first Do; during a Do, the Conn tells it of each message of that Do's
// answer, from whichever goroutine reads the connection, never after Do
// returned. The sink must not allocate nor block.
type MessageConn interface {
	Conn
	SetMessageSink(MessageSink)
}

// MessageDialer is a Dialer whose Conns may answer with streams of
// messages: StreamsMessages says they do, and the engine then keeps the
// messages' statistics.
type MessageDialer interface {
	StreamsMessages() bool
}

// ConnCounter is implemented by dialers whose connections share transport
// connections (HTTP/2 streams, gRPC channels): Opened reports how many
// transport connections were really established, which the engine reports
// instead of its count of successful Dials.
type ConnCounter interface {
	Opened() int64
}
