package protocol

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
