package rpc

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/targets/grpcecho"
)

// Server- and client-streaming calls, on goroutines (the event loop drives
// unary calls and ping-pong streams only), plaintext and over TLS.

var streamingVariants = []variant{{loadgen.DriverGoroutines, false}, {loadgen.DriverGoroutines, true}}

// runMode runs cfg through the engine as its mode's -p.
func runMode(t *testing.T, v variant, cfg Config, lc loadgen.Config) results.Summary {
	t.Helper()
	if v.tls {
		cfg.TLS = protocol.TLS{Enabled: true, Insecure: true}
	}
	d := newDialer(t, cfg)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams, lc.Threads = cfg.Target, string(cfg.Mode), v.driver, cfg.Streams, 1
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	return r.Summary
}

// closedN is a closed-loop run of n requests on c connections.
func closedN(c int, n int64) loadgen.Config {
	var lc loadgen.Config
	lc.Connections, lc.Requests = c, n
	return lc
}

// A server-streaming call's messages are counted exactly: the client's
// count is the target's, each call's first message is timed once and every
// other one as a gap.
func TestEngineServerStream(t *testing.T) {
	const calls, msgs, size = 60, 7, 16
	for _, v := range streamingVariants {
		for _, open := range []bool{false, true} {
			name := v.String() + "/closed"
			if open {
				name = v.String() + "/open"
			}
			t.Run(name, func(t *testing.T) {
				srv := v.echo(t, grpcecho.Config{})
				lc := closedN(2, calls)
				if open {
					lc.Pacer = pace.Constant{PerSec: 2000}
				}
				s := runMode(t, v, Config{Target: srv.Addr(), Mode: ServerStream, Messages: msgs, Size: size, Streams: 2}, lc)
				if s.Requests != calls || s.Errors.Total() != 0 || srv.ServerStreamCalls() != calls {
					t.Fatalf("%d calls answered, errors %+v, the server made %d; want %d, none", s.Requests, s.Errors, srv.ServerStreamCalls(), calls)
				}
				m := s.Messages
				if m == nil {
					t.Fatal("no message statistics for a server-streaming run")
				}
				if m.Count != calls*msgs || uint64(m.Count) != srv.StreamedMessages() {
					t.Errorf("%d messages counted, the server sent %d; want %d", m.Count, srv.StreamedMessages(), calls*msgs)
				}
				if m.First.Count != calls || m.Gap == nil || m.Gap.Count != calls*(msgs-1) {
					t.Errorf("first messages timed %d, gaps %+v; want %d and %d", m.First.Count, m.Gap, calls, calls*(msgs-1))
				}
				if m.PerSec <= 0 || m.First.Max > s.Latency.Max {
					t.Errorf("messages/s %v, first message max %v past the calls' max %v", m.PerSec, m.First.Max, s.Latency.Max)
				}
				if want := int64(calls * msgs * wireSize(size)); s.BytesRead != want {
					t.Errorf("read %d bytes, want %d (every message)", s.BytesRead, want)
				}
			})
		}
	}
}

// With a delay before each message, the first message comes a delay after
// the call's start and each next one a delay after the one before: the
// times are the messages', not the call's.
func TestEngineServerStreamTimes(t *testing.T) {
	const delay, msgs = 20 * time.Millisecond, 4
	v := streamingVariants[0]
	srv := v.echo(t, grpcecho.Config{Delay: delay})
	s := runMode(t, v, Config{Target: srv.Addr(), Mode: ServerStream, Messages: msgs}, closedN(1, 5))
	m := s.Messages
	if s.Errors.Total() != 0 || m == nil || m.Gap == nil {
		t.Fatalf("errors %+v, messages %+v", s.Errors, m)
	}
	// The first message cannot come before the server's wait. A gap is
	// the server's wait plus the next message's way less this one's: a
	// message the client took late shortens the gap after it, so the gap
	// is held to most of the wait (none at all, were messages stamped
	// together), not all of it.
	if m.First.Min.D() < delay || m.Gap.Min.D() < delay*3/4 {
		t.Errorf("first message min %v, gap min %v: each waits %v at the server", m.First.Min, m.Gap.Min, delay)
	}
	if m.First.Max >= s.Latency.Min {
		t.Errorf("first message max %v not before the calls' min %v: the first of %d messages is timed as the call", m.First.Max, s.Latency.Min, msgs)
	}
}

// A client-streaming call sends Messages messages and gets one reply: the
// target reads every one; the call's latency is the engine's.
func TestEngineClientStream(t *testing.T) {
	const calls, msgs, size = 40, 5, 8
	for _, v := range streamingVariants {
		t.Run(v.String(), func(t *testing.T) {
			srv := v.echo(t, grpcecho.Config{})
			s := runMode(t, v, Config{Target: srv.Addr(), Mode: ClientStream, Messages: msgs, Size: size}, closedN(2, calls))
			if s.Requests != calls || s.Errors.Total() != 0 || srv.ClientStreamCalls() != calls {
				t.Fatalf("%d calls answered, errors %+v, the server answered %d; want %d, none", s.Requests, s.Errors, srv.ClientStreamCalls(), calls)
			}
			if srv.ReceivedMessages() != calls*msgs {
				t.Errorf("the server read %d messages, want %d", srv.ReceivedMessages(), calls*msgs)
			}
			if s.Messages != nil {
				t.Errorf("message statistics %+v for a client-streaming run: its answer is one message", s.Messages)
			}
			if s.Latency.Count != calls || s.Latency.Min <= 0 {
				t.Errorf("latency %+v: one per call", s.Latency)
			}
		})
	}
}

// sinkCount counts a Conn's messages.
type sinkCount struct {
	mu sync.Mutex
	n  int
}

func (s *sinkCount) Message(time.Time) { s.mu.Lock(); s.n++; s.mu.Unlock() }

// The target's streaming methods as Calls, found by reflection.
func TestCallStreaming(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	call, msg := resolve(t, Config{Target: srv.Addr(), Mode: ServerStream}, "loadgen.echo.v1.Echo/ServerStream", `{"body":"aGk=","messages":4}`, "")
	if call != serverMethod {
		t.Errorf("call %q, want %q", call, serverMethod)
	}
	c := dial(t, newDialer(t, Config{Target: srv.Addr(), Mode: ServerStream, Call: call, Message: msg}))
	sink := new(sinkCount)
	c.(protocol.MessageConn).SetMessageSink(sink)
	doN(t, c, 3, int64(prefixLen+len(msg)), 4*wireSize(2))
	if sink.n != 12 || srv.StreamedMessages() != 12 {
		t.Errorf("the sink was told of %d messages, the server sent %d; want 12", sink.n, srv.StreamedMessages())
	}

	call, msg = resolve(t, Config{Target: srv.Addr(), Mode: ClientStream}, "loadgen.echo.v1.Echo/ClientStream", `{"body":"aGk="}`, "")
	c = dial(t, newDialer(t, Config{Target: srv.Addr(), Mode: ClientStream, Call: call, Message: msg, Messages: 3}))
	doN(t, c, 2, 3*int64(prefixLen+len(msg)), wireSize(2)+2) // the body and messages: 3
	if srv.ReceivedMessages() != 6 || srv.ClientStreamCalls() != 2 {
		t.Errorf("the server read %d messages in %d calls, want 6 in 2", srv.ReceivedMessages(), srv.ClientStreamCalls())
	}

	for _, tc := range []struct {
		mode         Mode
		method, want string
	}{
		{ServerStream, "loadgen.echo.v1.Echo/Unary", "Echo/Unary is unary: call it with -p grpc (-p grpc-server-stream calls server-streaming methods)"},
		{Unary, "loadgen.echo.v1.Echo/ServerStream", "Echo/ServerStream is server-streaming: call it with -p grpc-server-stream"},
		{Stream, "loadgen.echo.v1.Echo/ClientStream", "Echo/ClientStream is client-streaming: call it with -p grpc-client-stream"},
	} {
		resolveFails(t, Config{Target: srv.Addr(), Mode: tc.mode}, tc.method, "", "", tc.want)
	}
}

// Streaming modes run on goroutines: asking for the loop says so.
func TestStreamingNotOnLoop(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	for _, mode := range []Mode{ServerStream, ClientStream} {
		d := newDialer(t, Config{Target: srv.Addr(), Mode: mode})
		lc := closedN(1, 1)
		lc.Target, lc.Protocol, lc.Driver, lc.Threads = srv.Addr(), string(mode), loadgen.DriverLoop, 1
		_, err := loadgen.Run(context.Background(), lc, d)
		if err == nil || !strings.Contains(err.Error(), "--driver loop cannot drive -p "+string(mode)) {
			t.Errorf("%s on the loop: %v, want an error saying the loop cannot drive it", mode, err)
		}
	}
}

// A window keeps its messages in flight on one stream: with a delay at the
// server, which reads a stream's messages as they come, the most it holds
// at once is the window, every message answered, on one stream per
// window.
func TestEngineWindow(t *testing.T) {
	const window, n = 8, 64
	srv := startEcho(t, grpcecho.Config{Delay: 50 * time.Millisecond})
	cfg := Config{Target: srv.Addr(), Mode: Stream, Streams: window, Window: window}
	d, err := NewLibraryDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lc := closedN(1, n)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams, lc.Threads = cfg.Target, string(Stream), loadgen.DriverGoroutines, window, 1
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if s.Requests != n || s.Errors.Total() != 0 || srv.Messages() != n {
		t.Fatalf("%d messages answered, errors %+v, the server answered %d; want %d", s.Requests, s.Errors, srv.Messages(), n)
	}
	if got := srv.MaxInFlight(); got != window {
		t.Errorf("the server held up to %d messages of a stream at once, want the window, %d", got, window)
	}
	if got := srv.Streams(); got != 1 {
		t.Errorf("%d streams opened, want 1 for the window", got)
	}
}

func TestWindowConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: Unary, Window: 2, Streams: 2}, "a window of messages in flight is on a ping-pong stream"},
		{Config{Mode: Stream, Window: 4, Streams: 6}, "give a multiple of it"},
		{Config{Mode: Stream, Window: -1}, "out of range"},
	} {
		tc.cfg.Target = "127.0.0.1:1"
		if _, err := NewLibraryDialer(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewDialer(Config{Target: "127.0.0.1:1", Mode: Stream, Window: 2, Streams: 2}); err == nil || !strings.Contains(err.Error(), "runs on grpc-go's") {
		t.Errorf("the lean client with a window: %v", err)
	}
}

// Open loop, the time to a call's first message is from its intended
// start, as the call's latency: a server slower than the schedule makes
// the calls late, and their first messages with them, while the
// uncorrected latency, from each send, stays near the server's time.
func TestEngineServerStreamOpenLoop(t *testing.T) {
	const delay = 20 * time.Millisecond // one call at a time: 50 calls/s
	v := streamingVariants[0]
	srv := v.echo(t, grpcecho.Config{Delay: delay})
	lc := closedN(1, 40)
	lc.Pacer = pace.Constant{PerSec: 200} // 4 times what the one connection can do
	s := runMode(t, v, Config{Target: srv.Addr(), Mode: ServerStream, Messages: 1}, lc)
	m := s.Messages
	if s.Errors.Total() != 0 || m == nil || s.Uncorrected == nil {
		t.Fatalf("errors %+v, messages %+v", s.Errors, m)
	}
	// The 40th call is due at 195 ms and starts after 39 calls of 20 ms:
	// its first message is at least 585 ms late.
	if m.First.Max.D() < 20*delay {
		t.Errorf("first message max %v, uncorrected latency max %v: the first message is not timed from the call's intended start", m.First.Max, s.Uncorrected.Max)
	}
	if m.First.Max > s.Latency.Max {
		t.Errorf("first message max %v past the calls' max %v", m.First.Max, s.Latency.Max)
	}
}

// A window's message past the timeout cancels its stream: every message
// on it fails, counted at the timeout, and the Conns dial new streams.
func TestEngineWindowTimeouts(t *testing.T) {
	const window = 4
	srv := startEcho(t, grpcecho.Config{Delay: time.Second})
	cfg := Config{Target: srv.Addr(), Mode: Stream, Streams: window, Window: window}
	d, err := NewLibraryDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lc loadgen.Config
	lc.Connections, lc.Duration, lc.Timeout = 1, results.Duration(400*time.Millisecond), results.Duration(50*time.Millisecond)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams, lc.Threads = cfg.Target, string(Stream), loadgen.DriverGoroutines, window, 1
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if s.Requests != 0 || s.Errors.Timeout < window || s.Errors.Total() != s.Errors.Timeout {
		t.Fatalf("%d answered, errors %+v: want timeouts only", s.Requests, s.Errors)
	}
	if mx := s.Latency.Max.D(); mx < 50*time.Millisecond || mx > 60*time.Millisecond {
		t.Errorf("max %v: a timeout is counted at the 50 ms timeout", mx)
	}
	// Each round of timeouts breaks one stream; the next round is on a new one.
	if n := srv.Streams(); n < 2 {
		t.Errorf("the server saw %d streams over %d timed-out messages: a broken window's Conns must open a new one", n, s.Errors.Timeout)
	}
}
