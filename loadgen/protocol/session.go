package protocol

import "context"

// Session is one connection's protocol as an event loop drives it: the
// protocol frames requests and parses responses from bytes; the loop owns
// the socket, the waiting and the clock. This is how loadgen drives plain
// TCP protocols — HTTP/1.1 without TLS, tcp-rr, tcp-crr, tcp-stream — with
// no goroutine switch per request, as wrk's event loop does. A Session is
// used by one loop at a time and must not allocate per request.
type Session interface {
	// Request is the next request's bytes. They must stay unchanged until
	// the response completes.
	Request() []byte
	// Response consumes bytes read from the connection after the request
	// was written in full; it is first called with no bytes, right after
	// the write (a request that has no response, tcp-stream's, completes
	// there). It returns how many bytes of p belong to this response and,
	// once the response is complete, done and its Outcome: Status, Err
	// (Status or Protocol: socket errors are the loop's), Done when the
	// connection cannot carry another request, Bytes and Written for this
	// request.
	Response(p []byte) (n int, done bool, o Outcome)
	// Closed is called when the peer closed the connection while the
	// response was awaited: a response delimited by the connection's end
	// completes (Done); anything else is a Read error.
	Closed() Outcome
}

// SessionDialer is a Dialer whose connections an event loop can drive
// itself. Dial stays the reference path (and serves where no loop runs).
type SessionDialer interface {
	Dialer
	// Sessions tells whether this Dialer's connections can be driven as
	// Sessions (not over TLS, say).
	Sessions() bool
	// Socket creates a non-blocking TCP socket and starts connecting it to
	// the target: the connection is up once the socket is writable and its
	// SO_ERROR is 0. The error of a socket that cannot even start
	// connecting is a connect error.
	Socket() (fd int, err error)
	// Session returns the protocol state of one new connection.
	Session() Session
	// PerRequest tells that every request opens its own connection
	// (tcp-crr): the connect is part of each request's latency.
	PerRequest() bool
}

// MuxDialer is a Dialer whose connections carry several requests at once
// (HTTP/2's streams) and that an event loop can drive itself: Streams of
// the engine's connections share one of its connections, each on a slot.
type MuxDialer interface {
	Dialer
	// Sessions tells whether an event loop can drive the connections
	// (not over TLS, say).
	Sessions() bool
	// Socket is as SessionDialer's.
	Socket() (fd int, err error)
	// Mux returns the protocol state of one new connection carrying up to
	// slots requests at once.
	Mux(slots int) Mux
}

// MuxOpener is a MuxDialer whose connections, over TLS, an event loop
// does not open itself: crypto/tls owns the handshake. They are opened
// in a goroutine, as a Dial's, and handed to the loop once up.
type MuxOpener interface {
	MuxDialer
	// Opens tells whether connections are opened by Open, not Socket.
	Opens() bool
	// Open connects, blocking, within ctx: TCP and TLS, whose handshake
	// counts in the connect time, as the protocol's own handshake on the
	// loop does. It returns the socket (non-blocking, the caller's to
	// close) and the protocol state of the connection over it, for slots
	// requests at once, its handshake still to do.
	Open(ctx context.Context, slots int) (fd int, m Mux, err error)
}

// Mux is one multiplexed connection's protocol as an event loop drives
// it: the loop owns the socket and the clock, writes Output, reads into
// ReadBuf and hands what it read to Filled; the protocol frames and
// parses. Until Ready (its handshake), the connection is still opening.
// A Mux is used by one loop and must not allocate per request.
type Mux interface {
	Output() []byte // to be written now
	Wrote(n int)    // n bytes of Output were written
	ReadBuf() []byte
	// Filled takes n bytes read into ReadBuf and returns the slots whose
	// request ended (Outcome says how), valid until the next call.
	Filled(n int) []int32
	// Fail ends the connection (a socket error or the peer's close, of
	// class Read or Write) and returns the slots whose request it ended.
	Fail(class ErrClass) []int32
	Ready() bool  // the handshake is over: requests may start
	Usable() bool // it takes new requests (no GOAWAY, not failed)
	Dead() bool   // it failed: close it once Output is written
	// Goodbye is what to write, if the socket takes it, before an orderly
	// close (HTTP/2's GOAWAY).
	Goodbye() []byte
	// Start sends slot k's next request: MuxStarted, MuxLater (the peer's
	// stream limit: start it once another request ends), or MuxRefused
	// (the connection takes no new request: the Outcome says why, Unsent
	// when the peer is going away and a new connection should carry it).
	Start(k int) (int, Outcome)
	Outcome(k int) Outcome // of a request Filled or Fail said ended
	// Cancel ends slot k's request at its deadline (the connection stays)
	// and returns its Outcome, Err Timeout.
	Cancel(k int) Outcome
}

// Mux.Start results.
const (
	MuxStarted = iota
	MuxLater
	MuxRefused
)
