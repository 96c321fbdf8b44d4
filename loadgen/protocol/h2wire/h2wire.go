// Package h2wire is the HTTP/2 wire format (RFC 9113 framing, RFC 7541
// HPACK) as loadgen's HTTP/2 clients speak it: the http2 protocol (h2, h2c)
// and grpc. It holds what those clients do alike and nothing of how they
// run their connections.
//
// Frames are appended to a caller's buffer and parsed in place from one, so
// neither direction allocates. Requests are HPACK-encoded once (a run sends
// the same header list again and again); responses are decoded by a
// Decoder that keeps the peer's dynamic table in step while storing only
// sizes and the values of the few fields its caller reads.
//
// Frame types, flags, settings and error codes are x/net/http2's.
package h2wire

const (
	// ClientPreface starts every client connection (RFC 9113 §3.4).
	ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// FrameHeaderLen is the size of a frame header.
	FrameHeaderLen = 9
	// DefaultMaxFrame is SETTINGS_MAX_FRAME_SIZE's initial value: the
	// largest frame payload until the peer allows more, and the largest
	// the clients accept (they never raise it).
	DefaultMaxFrame = 16384
	// DefaultWindow is the initial flow-control window of a stream and of
	// the connection.
	DefaultWindow = 65535
	// MaxWindow is the largest flow-control window.
	MaxWindow = 1<<31 - 1
	// MaxStreamID is the last stream ID: a connection is used up after it.
	MaxStreamID = 1<<31 - 1
	// DefaultTableSize is SETTINGS_HEADER_TABLE_SIZE's initial value: the
	// size of both HPACK dynamic tables until a peer says otherwise.
	DefaultTableSize = 4096
)
