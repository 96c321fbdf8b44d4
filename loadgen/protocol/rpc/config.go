// Package grpc is loadgen's gRPC protocol:
//
//   - grpc (Unary): each request is one unary call of
//     loadgen.echo.v1.Echo/Unary, or of grpc.health.v1.Health/Check with
//     Config.Health (as ghz and fortio do against any gRPC server).
//   - grpc-stream (Stream): each Conn owns one Echo/PingPong stream, opened
//     when it is dialed (on an event loop, with its first message), and
//     each request sends one message and reads its reply: one message in
//     flight per stream, the ping-pong of the CNI studies.
//
// With Config.Call, either mode calls any method of any server instead, as
// ghz --call does: a unary method, or a bidi-streaming one for ping-pong,
// with a request ResolveCall encoded from JSON, using the method's types
// from the server's reflection service or from a protoset file.
//
// One HTTP/2 connection carries Config.Streams Conns: c connections × m
// streams are c*m Dials over c TCP connections.
//
// The client speaks gRPC over loadgen's own HTTP/2 connection layer,
// h2conn (framing, HPACK, flow control, SETTINGS, PING, GOAWAY: the h2
// protocol's too), instead of through grpc-go, whose unary call costs some
// 80 allocations and three goroutine hand-offs. Here the request (message
// and header block) is encoded once; a call is one write of prebuilt
// frames, and the Conns of a connection take turns reading it, with no
// goroutine of the connection's own. Replies are checked (framing, body
// length, health status) without being decoded into messages. A Do
// allocates nothing, deadline included, so a generator CPU-second makes
// several times the calls of ghz or fortio.
//
// A call the server did not process (above a GOAWAY's last stream), or
// that its connection could no longer send (GOAWAY, stream IDs used up),
// is Outcome.Unsent and Done: the engine sends it again on a new
// connection, outside the call's latency. Malformed responses (RFC 9113
// §8.1.1) are Internal (13) and Protocol at once, their stream reset.
//
// The target is loadgen/targets/grpcecho; any gRPC server answers health
// checks, and a Call's replies are checked only for being well-formed
// protobuf. This package does not import the target: the method names and
// the two-field wire format are written out here.
package rpc

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"loadgen/loadgen/protocol"
)

// Mode is the kind of gRPC load.
type Mode string

const (
	Unary        Mode = "grpc"               // one unary call per request
	Stream       Mode = "grpc-stream"        // one ping-pong message per request on a kept stream
	ServerStream Mode = "grpc-server-stream" // one server-streaming call per request: one message out, a stream back
	ClientStream Mode = "grpc-client-stream" // one client-streaming call per request: Messages out, one back
)

const (
	// MaxSize bounds Config.Size and Config.ResponseSize.
	MaxSize = 64 << 20
	// MaxStreams bounds Config.Streams.
	MaxStreams = 10000
	// MaxMessages bounds Config.Messages.
	MaxMessages = 1000000
	// maxCallBody bounds what a client-streaming call sends.
	maxCallBody = 256 << 20
	// DefaultMessages is Config.Messages when 0, in ServerStream and
	// ClientStream modes.
	DefaultMessages = 10
	// DefaultDialTimeout bounds a Dial when Config.DialTimeout is 0 (the
	// Dial's context may end it sooner).
	DefaultDialTimeout = 10 * time.Second
)

// Config configures a Dialer.
type Config struct {
	Target       string        // host:port
	Mode         Mode          // Unary or Stream; empty means Unary
	Size         int           // request body bytes, 0 to MaxSize
	ResponseSize int           // reply body bytes: 0 echoes the request body, -1 asks for an empty one
	Streams      int           // Conns sharing one connection (-m); 0 means 1
	Connections  int           // connections the run opens (-c); informative only, 0 allowed
	TLS          protocol.TLS  // TLS options; the zero value is plaintext (h2c)
	Metadata     []string      // "key: value" (-H); "host: …" sets :authority, "user-agent: …" the agent
	DialTimeout  time.Duration // bounds a Dial (TCP, TLS, HTTP/2 settings); 0 means DefaultDialTimeout
	Health       bool          // call grpc.health.v1.Health/Check instead of Echo.Unary (Unary only)
	// Messages is, in ClientStream mode, the messages each call sends; in
	// ServerStream mode, the messages each call asks the echo target for
	// (with Call, the server decides: leave it 0). 0 means DefaultMessages.
	Messages int
	// Window is, in Stream mode, how many messages each stream keeps in
	// flight: Window Conns share a stream, each Do one message on it (the
	// library client only: NewLibraryDialer). Streams counts Conns, so it
	// is a multiple of Window. 0 or 1: a stream per Conn, the ping-pong.
	Window int

	// Call is the method to call instead of the echo target's, in full,
	// "package.Service/Method" (a leading "/" is optional): a unary method
	// in Unary mode, a bidi-streaming one in Stream mode. Empty calls the
	// echo target (or health, with Health). ResolveCall checks it against
	// the server's types; Size, ResponseSize and Health do not apply.
	Call string
	// Message is Call's request message, protobuf-encoded, without gRPC's
	// 5-byte prefix: every call sends it as it is (in Stream mode, every
	// ping-pong message). Empty is the empty message. ResolveCall makes it
	// from JSON.
	Message []byte
}

// ParseMode accepts "grpc" / "unary", "grpc-stream" / "stream" /
// "ping-pong", "grpc-server-stream" / "server-stream" and
// "grpc-client-stream" / "client-stream".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "grpc", "unary", "grpc-unary", "":
		return Unary, nil
	case "grpc-stream", "stream", "ping-pong", "pingpong", "grpc-pingpong":
		return Stream, nil
	case "grpc-server-stream", "server-stream", "server-streaming":
		return ServerStream, nil
	case "grpc-client-stream", "client-stream", "client-streaming":
		return ClientStream, nil
	}
	return "", fmt.Errorf("unknown gRPC mode %q: %s", s, modeList)
}

// modeList says the modes in an error.
const modeList = "use grpc (unary), grpc-stream (ping-pong), grpc-server-stream or grpc-client-stream"

// streamsCalls reports whether each request of m is a call of its own, on a
// new stream.
func (m Mode) streamsCalls() bool { return m != Stream }

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// settings is a validated Config with its defaults applied.
type settings struct {
	Config
	host      string   // the target's host, for TLS
	authority string   // :authority; empty means the target
	userAgent string   // empty means grpc-go's
	md        []string // metadata pairs, key, value, key, value …
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c}
	switch c.Mode {
	case Unary, Stream, ServerStream, ClientStream:
	case "":
		s.Mode = Unary
	default:
		return s, fmt.Errorf("grpc: unknown mode %q: %s", c.Mode, modeList)
	}
	host, port, err := net.SplitHostPort(c.Target)
	if err != nil || strings.Contains(c.Target, "/") {
		return s, fmt.Errorf("grpc: target %q: want host:port, e.g. 127.0.0.1:50051 or [::1]:50051 (no scheme)", c.Target)
	}
	if host == "" {
		return s, fmt.Errorf("grpc: target %q has no host", c.Target)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return s, fmt.Errorf("grpc: target %q: port must be a number from 1 to 65535", c.Target)
	}
	s.host = host
	if c.Size < 0 || c.Size > MaxSize {
		return s, fmt.Errorf("grpc: size %d bytes out of range: use 0 to %d (64 MiB)", c.Size, MaxSize)
	}
	if c.ResponseSize < -1 || c.ResponseSize > MaxSize {
		return s, fmt.Errorf("grpc: response size %d bytes out of range: use -1 (empty), 0 (echo) or up to %d (64 MiB)", c.ResponseSize, MaxSize)
	}
	if c.Streams < 0 || c.Streams > MaxStreams {
		return s, fmt.Errorf("grpc: %d streams per connection out of range: use 1 to %d", c.Streams, MaxStreams)
	}
	if s.Streams == 0 {
		s.Streams = 1
	}
	if c.Connections < 0 {
		return s, fmt.Errorf("grpc: negative connection count %d", c.Connections)
	}
	if c.DialTimeout < 0 {
		return s, fmt.Errorf("grpc: negative dial timeout %v", c.DialTimeout)
	}
	if s.DialTimeout == 0 {
		s.DialTimeout = DefaultDialTimeout
	}
	switch {
	case c.Window < 0 || c.Window > MaxStreams:
		return s, fmt.Errorf("grpc: window of %d messages out of range: use 1 to %d", c.Window, MaxStreams)
	case c.Window > 1 && s.Mode != Stream:
		return s, fmt.Errorf("grpc: a window of messages in flight is on a ping-pong stream: use grpc-stream, not %s", s.Mode)
	case c.Window > 1 && s.Streams%c.Window != 0:
		return s, fmt.Errorf("grpc: %d Conns per connection do not share streams of a window of %d: give a multiple of it", s.Streams, c.Window)
	}
	if err := s.setMessages(); err != nil {
		return s, err
	}
	if err := s.setCall(); err != nil {
		return s, err
	}
	if n := prefixLen + max(s.Size, len(s.Message)); s.Mode == ClientStream && n*s.Messages > maxCallBody {
		return s, fmt.Errorf("grpc: %d messages of %d bytes are over %d MiB a call: keep a client-streaming call within %d MiB", s.Messages, n, n*s.Messages>>20, maxCallBody>>20)
	}
	if c.Health {
		if s.Mode != Unary {
			return s, errors.New("grpc: health checks are unary calls: use mode grpc with --health, not grpc-stream")
		}
		if c.Size != 0 || c.ResponseSize != 0 {
			return s, errors.New("grpc: health checks carry no payload: leave the request and response sizes at 0")
		}
	}
	if !c.TLS.Enabled && tlsOptionsSet(c.TLS) {
		return s, fmt.Errorf("grpc: TLS options given for %s without TLS: add --tls", c.Target)
	}
	for _, h := range c.Metadata {
		if err := s.addMetadata(h); err != nil {
			return s, err
		}
	}
	return s, nil
}

// setMessages checks Messages and applies its default.
func (s *settings) setMessages() error {
	switch {
	case s.Messages < 0 || s.Messages > MaxMessages:
		return fmt.Errorf("grpc: %d messages per call out of range: use 1 to %d", s.Messages, MaxMessages)
	case s.Mode != ServerStream && s.Mode != ClientStream:
		if s.Messages != 0 {
			return fmt.Errorf("grpc: messages per call apply to grpc-server-stream and grpc-client-stream, not %s", s.Mode)
		}
	case s.Mode == ServerStream && s.Call != "":
		if s.Messages != 0 {
			return errors.New("grpc: a server-streaming --call's server decides how many messages it sends: leave out the message count")
		}
	case s.Messages == 0:
		s.Messages = DefaultMessages
	}
	return nil
}

// setCall checks Call and Message, and makes Call a :path ("/" first).
func (s *settings) setCall() error {
	if s.Call == "" {
		if len(s.Message) > 0 {
			return errors.New("grpc: a request message without a method: give the method with --call")
		}
		return nil
	}
	service, method, ok := strings.Cut(strings.TrimPrefix(s.Call, "/"), "/")
	if !ok || !protoreflect.FullName(service).IsValid() || !protoreflect.Name(method).IsValid() {
		return fmt.Errorf("grpc: call %q: want a full method name, package.Service/Method (e.g. grpc.health.v1.Health/Check)", s.Call)
	}
	s.Call = "/" + service + "/" + method
	switch {
	case s.Health:
		return errors.New("grpc: --health calls grpc.health.v1.Health/Check, --call another method: give one of them")
	case s.Size != 0 || s.ResponseSize != 0:
		return errors.New("grpc: --size applies to the echo target; with --call the message comes from --data")
	case len(s.Message) > MaxSize:
		return fmt.Errorf("grpc: request message of %d bytes out of range: up to %d (64 MiB)", len(s.Message), MaxSize)
	}
	return nil
}

// addMetadata parses one "key: value" and files it.
func (s *settings) addMetadata(h string) error {
	key, value, ok := strings.Cut(h, ":")
	if ok && key == "" { // ":authority: x"
		var k string
		k, value, ok = strings.Cut(value, ":")
		key = ":" + k
	}
	if !ok {
		return fmt.Errorf("grpc: metadata %q: want \"key: value\"", h)
	}
	key = strings.ToLower(strings.TrimSpace(key))
	value = strings.Trim(value, " \t")
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("grpc: metadata %q: the value holds a control character (%#x)", h, c)
		}
	}
	switch {
	case key == "host" || key == ":authority":
		if value == "" {
			return fmt.Errorf("grpc: metadata %q: empty authority", h)
		}
		s.authority = value
		return nil
	case key == "user-agent":
		s.userAgent = value
		return nil
	case strings.HasPrefix(key, ":") || strings.HasPrefix(key, "grpc-") ||
		key == "content-type" || key == "te" || key == "connection":
		return fmt.Errorf("grpc: metadata %q: %q is reserved by gRPC and set by loadgen", h, key)
	case !isMetadataKey(key):
		return fmt.Errorf("grpc: metadata %q: %q is not a valid key (use a-z 0-9 - _ .)", h, key)
	}
	s.md = append(s.md, key, value)
	return nil
}

// isMetadataKey reports whether k is a valid gRPC metadata key (lower case).
func isMetadataKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func tlsOptionsSet(t protocol.TLS) bool {
	return t.Insecure || t.CAFile != "" || t.ServerName != "" || t.MinVersion != 0 ||
		t.MaxVersion != 0 || len(t.Ciphers) > 0 || t.Resume || t.ClientCertSet()
}
