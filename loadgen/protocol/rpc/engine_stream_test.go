package rpc

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"loadgen/loadgen"
	"loadgen/results"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
)

// Ping-pong streams through the engine on both drivers, plaintext and
// over TLS, against the grpc-go target: on the event loop a slot keeps
// its stream open, each request one message on it; on goroutines each
// Conn owns a stream opened when it is dialed.

func runStreams(t *testing.T, v variant, cfg Config, lc loadgen.Config) results.Summary {
	t.Helper()
	cfg.Mode = Stream
	return runCalls(t, v, cfg, lc)
}

// Every message answered is one the server answered, none failed, each
// slot on one stream for the whole run.
func TestEngineStreams(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			srv := v.echo(t, grpcecho.Config{})
			var lc loadgen.Config
			lc.Connections, lc.Duration = 2, results.Duration(500*time.Millisecond)
			s := runStreams(t, v, Config{Target: srv.Addr(), Streams: 3, Size: 100}, lc)
			if s.Requests < 100 || uint64(s.Requests) != srv.Messages() || s.Errors.Total() != 0 {
				t.Fatalf("%d messages answered, the server answered %d, errors %+v", s.Requests, srv.Messages(), s.Errors)
			}
			// The engine's preflight dials one Conn, which opens a stream:
			// the goroutines keep it as the first worker's, the loop
			// closes it before the load.
			want := uint64(6)
			if v.driver == loadgen.DriverLoop {
				want++
			}
			if n := srv.Streams(); n != want {
				t.Errorf("the server saw %d streams, want %d: 2 connections × 3, each kept for the run", n, want)
			}
			if s.Connections.Established != 2 {
				t.Errorf("%d connections established, want 2", s.Connections.Established)
			}
			if want := s.Requests * wireSize(100); s.BytesRead != want {
				t.Errorf("bytes read %d, want %d: %d bytes a reply", s.BytesRead, want, wireSize(100))
			}
			if s.BytesWritten < s.Requests*wireSize(100) {
				t.Errorf("bytes written %d, want at least %d", s.BytesWritten, s.Requests*wireSize(100))
			}
		})
	}
}

// endingServer ends every ping-pong stream after it answered per
// messages (grpc-status 0), as a server that recycles streams does.
type endingServer struct {
	echopb.UnimplementedEchoServer
	per      int
	messages atomic.Uint64
	streams  atomic.Uint64
}

func (s *endingServer) PingPong(st echopb.Echo_PingPongServer) error {
	s.streams.Add(1)
	for range s.per {
		m, err := st.Recv()
		if err != nil {
			return nil
		}
		s.messages.Add(1)
		if err := st.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// On the loop, a stream the server ended is opened anew by the slot's
// next message: every reply counted is one the server sent, and the only
// errors are messages sent on a stream the server was ending (no reply:
// at most one per stream).
func TestLoopStreamServerEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	srv := &endingServer{per: 5}
	echopb.RegisterEchoServer(gs, srv)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	var lc loadgen.Config
	lc.Connections, lc.Duration = 1, results.Duration(500*time.Millisecond)
	s := runStreams(t, variant{driver: loadgen.DriverLoop}, Config{Target: ln.Addr().String(), Streams: 2}, lc)
	streams, msgs := srv.streams.Load(), srv.messages.Load()
	if s.Requests < 50 || uint64(s.Requests) != msgs {
		t.Fatalf("%d replies counted, the server sent %d", s.Requests, msgs)
	}
	if s.Errors.Total() != s.Errors.Read || uint64(s.Errors.Read) > streams {
		t.Errorf("errors %+v over %d streams: want only messages without a reply, at most one per stream", s.Errors, streams)
	}
	if min := uint64(s.Requests) / 5; streams < min {
		t.Errorf("%d streams for %d replies, 5 a stream: want at least %d", streams, s.Requests, min)
	}
	t.Logf("%d replies on %d streams, %d messages without a reply", s.Requests, streams, s.Errors.Read)
}
