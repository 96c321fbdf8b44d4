package grpcecho

import (
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"loadgen/targets/grpcecho/echopb"
)

// TestServerStream checks a server stream: one request, Payload.messages
// replies, counted.
func TestServerStream(t *testing.T) {
	s := start(t, Config{})
	c := echopb.NewEchoClient(client(t, s.Addr()))
	for _, n := range []int32{0, 1, 7} {
		st, err := c.ServerStream(ctx(t), &echopb.Payload{Body: []byte("hi"), Messages: n})
		if err != nil {
			t.Fatal(err)
		}
		got := int32(0)
		for {
			m, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(m.GetBody()) != "hi" {
				t.Fatalf("body %q, want the echo", m.GetBody())
			}
			got++
		}
		if want := max(n, 1); got != want {
			t.Errorf("messages %d: got %d replies, want %d", n, got, want)
		}
	}
	if s.ServerStreamCalls() != 3 || s.StreamedMessages() != 1+1+7 {
		t.Errorf("server counted %d calls, %d messages; want 3, 9", s.ServerStreamCalls(), s.StreamedMessages())
	}
	st, err := c.ServerStream(ctx(t), &echopb.Payload{Messages: -1})
	if err == nil {
		_, err = st.Recv() // the status comes with the first Recv
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("messages -1: %v, want InvalidArgument", err)
	}
}

// TestClientStream checks a client stream: N messages in, one reply counting
// them.
func TestClientStream(t *testing.T) {
	s := start(t, Config{})
	c := echopb.NewEchoClient(client(t, s.Addr()))
	st, err := c.ClientStream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := st.Send(&echopb.Payload{Body: []byte("x"), ResponseSize: 3}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := st.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if r.GetMessages() != 5 || len(r.GetBody()) != 3 {
		t.Errorf("reply: %d messages, %d body bytes; want 5, 3", r.GetMessages(), len(r.GetBody()))
	}
	if s.ClientStreamCalls() != 1 || s.ReceivedMessages() != 5 {
		t.Errorf("server counted %d calls, %d messages; want 1, 5", s.ClientStreamCalls(), s.ReceivedMessages())
	}
}

// TestPipelinedPingPong checks that with a delay, a stream's messages are
// read as they come, so the server sees every message the client has in
// flight.
func TestPipelinedPingPong(t *testing.T) {
	s := start(t, Config{Delay: 100 * time.Millisecond})
	c := echopb.NewEchoClient(client(t, s.Addr()))
	st, err := c.PingPong(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	const window = 6
	for i := range window {
		if err := st.Send(&echopb.Payload{Body: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range window {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetBody()[0] != byte(i) {
			t.Fatalf("reply %d echoes message %d: out of order", i, m.GetBody()[0])
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last reply: %v, want the end of the stream", err)
	}
	if got := s.MaxInFlight(); got != window {
		t.Errorf("max in flight %d, want %d", got, window)
	}
}
