// Package h2conn is loadgen's one HTTP/2 connection layer, under both the
// http2 protocol (h2, h2c: package h2) and gRPC (package rpc). It owns the
// connection: the TCP and TLS dial, the preface and SETTINGS exchange,
// framing (h2wire), HPACK, flow control both ways, PING, GOAWAY, the
// server's stream limit, the sharing of one connection by the -m Conns
// dialed onto it, and the count of connections established. A layer above
// sees a Stream per Conn, one HTTP/2 stream at a time on it, and a Handler
// of its own that receives the response's header fields and data.
//
// Concurrency: no goroutine of its own. Everything but the read and write
// system calls happens under the connection's mutex. The stream that waits
// first becomes the reader: it reads and processes frames for every
// stream, wakes the parked streams whose wait is over and, once its own is
// over, hands the role to a parked stream. With one stream per connection
// a request's goroutine simply reads its own response. Frames are appended
// to one buffer, and the first stream to flush writes for all that are
// ready. This design was measured against a reader goroutine per
// connection with callers writing their own frames (the gRPC transport
// before this package): against the same server and frames it took as
// much CPU per request at one stream per connection, 3× less at 10 and 6×
// less at 50. An event loop drives the same connection without that half
// (Fed, fed.go): it owns the socket, writes what Fed has to write and
// feeds it what it read, for the streams of slots it starts requests on.
//
// Where the two clients used to differ, the package does what RFC 9113
// says, and the comments cite the section.
package h2conn

import (
	"crypto/tls"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// Config is the connection side of a target.
type Config struct {
	Name string // the layer's name, starting its errors: "http2", "grpc"
	Addr string // host:port to dial
	// Dest, when set, is Addr with its name looked up before a run: a
	// connection dials the address it found.
	Dest        *protocol.Target
	TLS         *tls.Config // nil for h2c with prior knowledge; ALPN h2 otherwise
	DialTimeout time.Duration
	Streams     int            // Conns per connection (-m); 0 means 1
	Fields      []h2wire.Field // the request's header list, the same for every request
	// Requests, when set, are a request mix's header lists (Fields is then
	// unused): a Stream sends the one picked (Stream.Pick, Fed.Pick), the
	// first until another is. Their HPACK blocks share the fields all of
	// them have (h2wire.EncodeRequests).
	Requests [][]h2wire.Field
	// Vary are the fields whose values vary per request (a field's
	// {{seq}} …), by request (one list without a mix); nil without.
	// They are sent as literals around the request's block: the pseudo
	// fields before it, the others after it, rendered with the values
	// the layer above gave the stream (Stream.SetDraw, Fed.SetDraw).
	Vary [][]VaryField
	// Want names the response fields (lowercase) the Handler gets, besides
	// :status which the connection reads itself.
	Want []string
}

// VaryField is a header field whose value is rendered per request.
type VaryField struct {
	Name  string             // lowercase; a pseudo field (":path") goes before the others
	Value *protocol.Template // nil: the rendered body's length (content-length)
}

// dialAddr is the address a connection dials.
func (c *Config) dialAddr() string {
	if c.Dest != nil {
		return c.Dest.DialAddr()
	}
	return c.Addr
}

// Handler is a layer's part of a Stream: what it makes of the response.
// The connection calls it under its lock, from whichever goroutine reads,
// and only for the stream's current request.
type Handler interface {
	// Field is a field named in Config.Want (name indexes it) in the
	// header block being decoded; value is valid only during the call.
	Field(name int, value []byte)
	// Block ends a header block whose fields Field was given: the final
	// response's headers (with their :status), trailers, or a block to
	// forget (informational, or malformed: the stream is reset).
	Block(kind BlockKind, status int32)
	// Data is the content of a DATA frame (padding removed).
	Data(p []byte)
	// Ready reports that what WaitMessage waits for has come.
	Ready() bool
	// Settle ends a wait of Request or Send: the layer takes what it needs
	// of the response while nothing else can touch it.
	Settle(r Result)
}

// BlockKind says what a header block was.
type BlockKind uint8

const (
	BlockHeaders  BlockKind = iota // the final (non-informational) response headers
	BlockTrailers                  // trailers: the stream ends with them
	BlockDropped                   // informational (1xx), or malformed
)

// Wait is what Request and Send wait for once the frames are written.
type Wait uint8

const (
	WaitEnd     Wait = iota // the stream ended: END_STREAM, reset, or the connection failed
	WaitMessage             // Handler.Ready, or the stream ended
	WaitNone                // nothing: return once the frames are written
)

// End says how a wait ended.
type End uint8

const (
	Satisfied End = iota // what was waited for came
	Deadline             // the request's deadline passed
	Canceled             // the run's context ended
	Closed               // the Stream was closed
	Failed               // the connection failed (Result.ConnErr says how)
)

// Result is what the connection saw of a request. It is a value.
type Result struct {
	End     End
	ConnErr protocol.ErrClass // why the connection failed: Read, Write or Protocol (End Failed, or Done)

	Finished bool  // the stream ended
	Status   int32 // :status of the final response headers; 0 before they came

	Reset bool          // the server reset the stream (RST_STREAM) with Code
	Code  http2.ErrCode //
	// Malformed is set when the server broke HTTP/2 on the stream, and the
	// client reset it (a stream error, RFC 9113 §5.4.2): a malformed response
	// (§8.1.1), or a bad WINDOW_UPDATE (§6.9).
	Malformed bool
	// Unsent is set when the server did not process the request. Either the
	// connection was going away (GOAWAY) or out of stream IDs before the
	// request was sent (Written is then 0), or the server's GOAWAY named
	// a last stream below it (RFC 9113 §6.8, §8.7).
	Unsent bool
	// Done is set when the connection takes no more requests (it failed, is
	// going away, is out of stream IDs), or the Stream was closed.
	Done bool

	Read    int64 // wire bytes of the stream's HEADERS, CONTINUATION and DATA frames, headers and padding included
	Written int64 // the same of what the client sent on the stream
}
