// Package grpcecho is the gRPC target: the loadgen.echo.v1.Echo service
// (echopb) with a unary echo and a ping-pong stream, plus grpc.health.v1
// (reporting SERVING) and server reflection, so grpcurl, ghz and fortio can
// drive it as well as loadgen.
//
//   - Echo.Unary answers each Payload with one Payload: the request body
//     echoed, or response_size zero bytes.
//   - Echo.PingPong answers each message of a stream with one message, in
//     order, as the ping-pong benchmark of the CNI studies does: the client
//     sends its next message when it has read the reply to the last one (or
//     keeps a window of them in flight).
//   - Echo.ServerStream answers one Payload with Payload.messages of them.
//   - Echo.ClientStream reads a stream of Payloads and answers one, whose
//     messages counts them.
//
// The server is tuned for throughput: no per-call logging, static flow
// control windows, a shared write buffer, stream workers, reply bodies of
// response_size taken from one shared read-only buffer and, on a stream,
// one request and one reply message reused for every message.
package grpcecho

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"loadgen/targets/accept"
	"loadgen/targets/grpcecho/echopb"
)

const (
	// DefaultAddr is where the server listens when Config.Addr is empty.
	DefaultAddr = "127.0.0.1:0"
	// DefaultMaxMessage is the largest body served when Config.MaxMessage
	// is 0; it matches the 64 MiB cap of loadgen's payloads.
	DefaultMaxMessage = 64 << 20
	// maxMaxMessage keeps a message below gRPC's 2 GiB length prefix.
	maxMaxMessage = 1 << 30
	// protoOverhead is room for a Payload's field tags and lengths around
	// a body of MaxMessage bytes.
	protoOverhead = 64
	// streamWindow and connWindow are static HTTP/2 flow-control windows:
	// large enough that a ping-pong of a few MiB needs no WINDOW_UPDATE
	// round trip, and no dynamic (BDP) pings.
	streamWindow = 4 << 20
	connWindow   = 16 << 20
)

// ALPN are the protocols a TLS server serves: gRPC is HTTP/2 alone. They
// are what its TLS configuration offers by ALPN (Config.TLS's NextProtos;
// tlscert's ServerOptions.Config takes them).
func ALPN() []string { return []string{"h2"} }

// Config configures a Server.
type Config struct {
	Addr       string        // host:port to listen on; empty means DefaultAddr
	TLS        *tls.Config   // nil serves plaintext (h2c); it needs a certificate
	MaxMessage int           // largest body received or sent, bytes; 0 means DefaultMaxMessage
	Delay      time.Duration // every unary call and every ping-pong reply waits this long first (a slow backend; timeout tests)
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("grpcecho: listen address %q: want host:port", c.Addr)
		}
	}
	if c.MaxMessage < 0 || c.MaxMessage > maxMaxMessage {
		return fmt.Errorf("grpcecho: max message %d bytes out of range: use 0 (64 MiB) to %d", c.MaxMessage, maxMaxMessage)
	}
	if c.Delay < 0 {
		return fmt.Errorf("grpcecho: negative delay %v", c.Delay)
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return errors.New("grpcecho: TLS configuration without a certificate")
	}
	return nil
}

// Server serves Echo, grpc.health.v1 and reflection on one port. Its
// counters are safe to read at any time.
type Server struct {
	cfg    Config
	gs     *grpc.Server
	health *health.Server
	zeros  atomic.Pointer[[]byte] // read-only zero bytes for response_size bodies

	mu     sync.Mutex
	state  accept.State  // listener, started, closed: under mu
	served chan struct{} // closed when Serve returns

	calls    atomic.Uint64
	messages atomic.Uint64
	checks   atomic.Uint64
	streams  atomic.Uint64
	active   atomic.Int64
	delayed  atomic.Int64

	serverCalls, sent     atomic.Uint64 // Echo.ServerStream calls and the messages they sent
	clientCalls, received atomic.Uint64 // Echo.ClientStream calls answered and the messages they read
	maxInFlight           atomic.Int64
}

// New checks cfg and builds a server that is not listening yet.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	s := &Server{cfg: cfg, served: make(chan struct{})}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxMessage + protoOverhead),
		grpc.MaxSendMsgSize(cfg.MaxMessage + protoOverhead),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s.gs = grpc.NewServer(opts...)
	echopb.RegisterEchoServer(s.gs, &echoService{s: s})

	s.health = health.NewServer()
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(echopb.Echo_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s.gs, &countingHealth{Server: s.health, n: &s.checks})

	reflection.Register(s.gs)
	return s, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln, err := s.state.Listen("grpcecho", s.cfg.Addr)
	if err != nil {
		return err
	}
	go func() {
		defer close(s.served)
		_ = s.gs.Serve(ln) // returns when Stop closes the listener
	}()
	return nil
}

// Addr is the address the server listens on (the real port once started,
// when the configured one was 0).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Addr(s.cfg.Addr)
}

// Close reports NOT_SERVING, closes the listener and every connection,
// cancels the calls in progress and waits for the server's goroutines. It is
// safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.state.Closed {
		s.mu.Unlock()
		if s.state.Started {
			<-s.served
		}
		return nil
	}
	s.state.Closed = true
	started := s.state.Started
	s.mu.Unlock()

	s.health.Shutdown()
	s.gs.Stop()
	if started {
		<-s.served
	}
	return nil
}

// Calls counts the Echo.Unary calls answered (counted before the reply is
// sent, so a client that has its reply sees it counted).
func (s *Server) Calls() uint64 { return s.calls.Load() }

// Messages counts the ping-pong messages answered on Echo.PingPong streams
// (counted before the reply is sent).
func (s *Server) Messages() uint64 { return s.messages.Load() }

// ServerStreamCalls counts the Echo.ServerStream calls started.
func (s *Server) ServerStreamCalls() uint64 { return s.serverCalls.Load() }

// StreamedMessages counts the messages Echo.ServerStream calls sent
// (counted before each is sent).
func (s *Server) StreamedMessages() uint64 { return s.sent.Load() }

// ClientStreamCalls counts the Echo.ClientStream calls answered (counted
// before the reply is sent).
func (s *Server) ClientStreamCalls() uint64 { return s.clientCalls.Load() }

// ReceivedMessages counts the messages Echo.ClientStream calls read.
func (s *Server) ReceivedMessages() uint64 { return s.received.Load() }

// MaxInFlight is the most messages one Echo.PingPong stream had received
// and not yet answered at once. It is kept with Config.Delay only, which
// reads a stream's messages as they come (without it, a stream's messages
// are read one at a time).
func (s *Server) MaxInFlight() int64 { return s.maxInFlight.Load() }

// HealthChecks counts the grpc.health.v1 Check calls answered.
func (s *Server) HealthChecks() uint64 { return s.checks.Load() }

// Streams counts the Echo.PingPong streams opened.
func (s *Server) Streams() uint64 { return s.streams.Load() }

// Delayed is the number of calls and messages waiting out Config.Delay
// now: received, not yet answered.
func (s *Server) Delayed() int64 { return s.delayed.Load() }

// ActiveStreams is the number of Echo.PingPong streams open now.
func (s *Server) ActiveStreams() int64 { return s.active.Load() }

// body returns the reply body for a request: the request's own body, or
// size zero bytes from the shared buffer (read-only, so shared safely).
func (s *Server) body(in *echopb.Payload) ([]byte, error) {
	n := int(in.GetResponseSize())
	switch {
	case n == 0:
		return in.GetBody(), nil
	case n < 0:
		return nil, nil
	case n > s.cfg.MaxMessage:
		return nil, fmt.Errorf("response_size %d is more than the server's max message (%d bytes)", n, s.cfg.MaxMessage)
	}
	if z := s.zeros.Load(); z != nil && len(*z) >= n {
		return (*z)[:n], nil
	}
	// Grow to the next power of two: few reallocations whatever the sizes.
	size := 4096
	for size < n {
		size *= 2
	}
	z := make([]byte, min(size, s.cfg.MaxMessage))
	s.zeros.Store(&z) // a racing grower stores an equal buffer: both are zeros
	return z[:n], nil
}
