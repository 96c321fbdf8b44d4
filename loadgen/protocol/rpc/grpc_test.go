package rpc

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
)

// hangGuard bounds a wait that must end, so that a bug fails the test
// instead of hanging it. It is not a performance assertion.
const hangGuard = 30 * time.Second

func startEcho(t *testing.T, cfg grpcecho.Config) *grpcecho.Server {
	t.Helper()
	s, err := grpcecho.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newDialer(t *testing.T, cfg Config) *Dialer {
	t.Helper()
	d, err := NewDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func dial(t *testing.T, d protocol.Dialer) protocol.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// client is one of the package's two clients, for the tests that run one
// scenario against both: the lean client (NewDialer) and the library one
// (NewLibraryDialer, on grpc-go's ClientConn).
type client struct {
	name    string
	library bool
	new     func(Config) (protocol.Dialer, error)
}

var (
	leanClient = client{"lean", false, func(cfg Config) (protocol.Dialer, error) {
		d, err := NewDialer(cfg)
		if err != nil {
			return nil, err // not a nil *Dialer in a non-nil protocol.Dialer
		}
		return d, nil
	}}
	libraryClient = client{"library", true, NewLibraryDialer}
	clients       = []client{leanClient, libraryClient}
)

// testDialer is what both clients' Dialers are.
type testDialer interface {
	protocol.Dialer
	protocol.ConnCounter
}

func (cl client) dialer(t testing.TB, cfg Config) testDialer {
	t.Helper()
	d, err := cl.new(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d.(testDialer)
}

// eachClient runs f as a subtest per client.
func eachClient(t *testing.T, f func(t *testing.T, cl client)) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) { f(t, cl) })
	}
}

// eachClientMode runs f as a subtest per client and mode.
func eachClientMode(t *testing.T, f func(t *testing.T, cl client, mode Mode)) {
	eachClient(t, func(t *testing.T, cl client) {
		for _, mode := range []Mode{Unary, Stream} {
			t.Run(string(mode), func(t *testing.T) { f(t, cl, mode) })
		}
	})
}

// pick is the client's own expectation, where the two clients differ.
func pick[T any](cl client, lean, library T) T {
	if cl.library {
		return library
	}
	return lean
}

// doAll makes n Dos on each Conn, the Conns at once, each with a deadline
// timeout away (0: none). A failed Do fails the test and ends its Conn's
// Dos.
func doAll(t *testing.T, conns []protocol.Conn, n int, timeout time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				var deadline time.Time
				if timeout > 0 {
					deadline = time.Now().Add(timeout)
				}
				if o := c.Do(context.Background(), deadline); o.Err != protocol.None {
					t.Errorf("Do: %+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// wireSize is the length-prefixed size of a Payload with a body of n bytes.
func wireSize(n int) int64 {
	return int64(prefixLen + proto.Size(&echopb.Payload{Body: make([]byte, n)}))
}

func TestUnary(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		srv := startEcho(t, grpcecho.Config{})
		var calls uint64
		for _, tc := range []struct {
			name           string
			size, respSize int
			reply          int // reply body bytes
			lean, library  int // calls each client makes (grpc-go's are slower)
		}{
			{"empty", 0, 0, 0, 100, 20},
			{"100B", 100, 0, 100, 100, 20},
			{"1KiB to 64KiB", 1024, 64 << 10, 64 << 10, 100, 20},
			{"1MiB to empty", 1 << 20, -1, 0, 100, 4},
			{"10B to 5MiB", 10, 5 << 20, 5 << 20, 4, 4}, // over grpc-go's default 4 MiB limit
		} {
			t.Run(tc.name, func(t *testing.T) {
				n := pick(cl, tc.lean, tc.library)
				d := cl.dialer(t, Config{Target: srv.Addr(), Size: tc.size, ResponseSize: tc.respSize})
				c := dial(t, d)
				written := int64(prefixLen + proto.Size(&echopb.Payload{Body: make([]byte, tc.size), ResponseSize: int32(tc.respSize)}))
				for i := range n {
					deadline := time.Time{}
					if i%2 == 1 {
						deadline = time.Now().Add(hangGuard)
					}
					o := c.Do(context.Background(), deadline)
					if o.Err != protocol.None || o.Done || o.Status != 0 {
						t.Fatalf("call %d: %+v", i, o)
					}
					if o.Bytes != wireSize(tc.reply) || o.Written != written {
						t.Fatalf("call %d: %d bytes read, %d written; want %d, %d", i, o.Bytes, o.Written, wireSize(tc.reply), written)
					}
				}
				calls += uint64(n)
				if got := srv.Calls(); got != calls {
					t.Errorf("server Calls = %d, want %d", got, calls)
				}
				if got := d.Opened(); got != 1 {
					t.Errorf("Opened = %d, want 1", got)
				}
			})
		}
	})
}

func TestHealth(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		srv := startEcho(t, grpcecho.Config{})
		c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Health: true}))
		for i := range 50 {
			if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.None || o.Bytes != prefixLen+2 || o.Written != prefixLen {
				t.Fatalf("check %d: %+v", i, o)
			}
		}
		if srv.HealthChecks() != 50 || srv.Calls() != 0 {
			t.Errorf("server: %d health checks, %d echo calls; want 50, 0", srv.HealthChecks(), srv.Calls())
		}
	})
}

// A plain grpc-go server whose health says NOT_SERVING: the call succeeds,
// the outcome is a status error.
func TestHealthNotServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)

	eachClient(t, func(t *testing.T, cl client) {
		c := dial(t, cl.dialer(t, Config{Target: ln.Addr().String(), Health: true}))
		if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.Status || o.Status != 0 || o.Done {
			t.Fatalf("outcome %+v, want a status error", o)
		}
	})
}

// A server without the Echo service: status 12, which ends a ping-pong
// stream (and its Conn) but not a unary Conn.
func TestNotEcho(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer() // no Echo service
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		c := dial(t, cl.dialer(t, Config{Target: ln.Addr().String(), Mode: mode}))
		o := c.Do(context.Background(), time.Time{})
		if o.Err != protocol.Status || o.Status != 12 || o.Done != (mode == Stream) {
			t.Fatalf("outcome %+v, want status 12 (Unimplemented)", o)
		}
	})
}

func TestPingPong(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		srv := startEcho(t, grpcecho.Config{})
		for _, tc := range []struct {
			size          int
			lean, library int // messages each client sends (grpc-go's are slower)
		}{
			{0, 100, 20},
			{1024, 100, 20},
			{1 << 20, 100, 4},
		} {
			t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
				size, n := tc.size, pick(cl, tc.lean, tc.library)
				before := srv.Messages()
				c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Mode: Stream, Size: size}))
				for i := range n {
					o := c.Do(context.Background(), time.Now().Add(hangGuard))
					if o.Err != protocol.None || o.Done || o.Bytes != wireSize(size) || o.Written != wireSize(size) {
						t.Fatalf("message %d: %+v, want %d bytes each way", i, o, wireSize(size))
					}
				}
				if got := srv.Messages() - before; got != uint64(n) {
					t.Errorf("server answered %d messages, want %d", got, n)
				}
			})
		}
		if srv.Streams() != 3 {
			t.Errorf("server saw %d streams, want 3", srv.Streams())
		}
	})
}

// inFlightServer is an Echo server that proves what a client keeps in flight
// on a stream: a reader goroutine receives messages as they arrive while
// replies go out late, so a client that sent message k+1 before it read
// reply k would be seen with two messages in flight.
type inFlightServer struct {
	echopb.UnimplementedEchoServer
	max      atomic.Int64
	messages atomic.Int64
}

func (s *inFlightServer) PingPong(st echopb.Echo_PingPongServer) error {
	var inFlight atomic.Int64
	msgs := make(chan *echopb.Payload, 16)
	errc := make(chan error, 1)
	go func() {
		defer close(msgs)
		for {
			m, err := st.Recv()
			if err != nil {
				errc <- err
				return
			}
			n := inFlight.Add(1)
			for { // max = max(max, n)
				old := s.max.Load()
				if n <= old || s.max.CompareAndSwap(old, n) {
					break
				}
			}
			msgs <- m
		}
	}()
	for m := range msgs {
		time.Sleep(time.Millisecond) // a pipelining client would send meanwhile
		s.messages.Add(1)
		inFlight.Add(-1) // before Send: the client may answer at once
		if err := st.Send(m); err != nil {
			return err
		}
	}
	return nil
}

func startInFlight(t *testing.T) (*inFlightServer, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	s := &inFlightServer{}
	echopb.RegisterEchoServer(gs, s)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return s, ln.Addr().String()
}

func TestPingPongOneInFlight(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		srv, addr := startInFlight(t)
		d := cl.dialer(t, Config{Target: addr, Mode: Stream, Size: 10, Streams: 3})
		doAll(t, []protocol.Conn{dial(t, d), dial(t, d), dial(t, d)}, 30, 0)
		if srv.messages.Load() != 90 {
			t.Errorf("server answered %d messages, want 90", srv.messages.Load())
		}
		if m := srv.max.Load(); m != 1 {
			t.Errorf("up to %d messages in flight on a stream, want 1", m)
		}
		if d.Opened() != 1 {
			t.Errorf("Opened = %d, want 1", d.Opened())
		}
	})
}

// The in-flight server catches a client that pipelines: the proof above
// can fail.
func TestInFlightServerCatchesPipelining(t *testing.T) {
	srv, addr := startInFlight(t)
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	st, err := echopb.NewEchoClient(cc).PingPong(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := st.Send(&echopb.Payload{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if srv.max.Load() < 2 {
		t.Fatalf("a pipelining client was seen with %d in flight", srv.max.Load())
	}
}

func TestDeadline(t *testing.T) {
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
		d := cl.dialer(t, Config{Target: srv.Addr(), Mode: mode})
		c := dial(t, d)
		o := c.Do(context.Background(), time.Now().Add(20*time.Millisecond))
		if o.Err != protocol.Timeout || !o.Done {
			t.Fatalf("outcome %+v, want a timeout that ends the Conn", o)
		}
		// A deadline already past: a timeout without sending anything.
		o = dial(t, d).Do(context.Background(), time.Now().Add(-time.Second))
		if o.Err != protocol.Timeout || o.Written != 0 {
			t.Fatalf("outcome %+v with a past deadline", o)
		}
	})
}

func TestCloseUnblocksDo(t *testing.T) {
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
		d := cl.dialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 2})
		c, other := dial(t, d), dial(t, d)
		done := make(chan protocol.Outcome)
		go func() { done <- c.Do(context.Background(), time.Time{}) }()
		waitDelayed(t, srv) // the request has left
		c.Close()
		select {
		case o := <-done:
			if o.Err == protocol.None || !o.Done {
				t.Errorf("aborted Do: %+v, want an error and Done", o)
			}
		case <-time.After(hangGuard):
			t.Fatal("Close did not unblock Do")
		}
		if o := c.Do(context.Background(), time.Time{}); !o.Done {
			t.Errorf("Do after Close: %+v", o)
		}
		// The other Conn on the connection lives on.
		if !takesConns(other) {
			t.Error("closing one Conn broke the connection of the other")
		}
		if o := other.Do(context.Background(), time.Now().Add(10*time.Millisecond)); o.Err != protocol.Timeout {
			t.Errorf("the connection's other Conn: %+v, want a timeout (the server waits an hour)", o)
		}
	})
}

func TestRunContextEndsDo(t *testing.T) {
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
		c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Mode: mode}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan protocol.Outcome)
		go func() { done <- c.Do(ctx, time.Time{}) }()
		waitDelayed(t, srv) // the request has left
		cancel()
		select {
		case o := <-done:
			if o.Err != protocol.Read || !o.Done {
				t.Errorf("cancelled Do: %+v, want a read error and Done", o)
			}
		case <-time.After(hangGuard):
			t.Fatal("cancelling the run did not unblock Do")
		}
	})
}

// A server that goes away: the Conn's next Do is a read error (Unavailable)
// and Done, and a new Dial does not join the dead connection.
func TestServerGone(t *testing.T) {
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		srv := startEcho(t, grpcecho.Config{})
		d := cl.dialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 2})
		c := dial(t, d)
		if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.None {
			t.Fatalf("Do: %+v", o)
		}
		srv.Close()
		o := c.Do(context.Background(), time.Now().Add(hangGuard))
		if o.Err != protocol.Read || !o.Done || o.Status != 14 {
			t.Errorf("Do on a closed server: %+v, want a read error (Unavailable) and Done", o)
		}
		if _, err := d.Dial(context.Background()); err == nil {
			t.Error("Dial joined a broken connection")
		}
		if d.Opened() != 1 {
			t.Errorf("Opened = %d, want 1", d.Opened())
		}
	})
}

// Metadata (-H) reaches the server; "host" becomes the :authority; the
// content-type is application/grpc, grpc-go's says protobuf as well.
func TestMetadata(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan metadata.MD, 2)
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		got <- md
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)

	eachClient(t, func(t *testing.T, cl client) {
		c := dial(t, cl.dialer(t, Config{Target: ln.Addr().String(), Health: true,
			Metadata: []string{"X-Tenant: blue", "Host: echo.example", "User-Agent: lg-test"}}))
		contentType := pick(cl, "application/grpc", "application/grpc+proto")
		for i := range 3 { // the first header block, then the indexed ones
			if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.None {
				t.Fatalf("call %d: %+v", i, o)
			}
			md := <-got
			for k, want := range map[string]string{"x-tenant": "blue", ":authority": "echo.example", "user-agent": "lg-test", "content-type": contentType} {
				if v := md.Get(k); len(v) != 1 || !strings.HasPrefix(v[0], want) {
					t.Errorf("call %d: %s = %q, want %q", i, k, v, want)
				}
			}
		}
	})
}

// connectionOf is the lean client's connection of a Conn.
func connectionOf(c protocol.Conn) *h2conn.Conn {
	switch c := c.(type) {
	case *unaryConn:
		return c.s.Conn()
	case *streamConn:
		return c.s.Conn()
	}
	panic(fmt.Sprintf("%T", c))
}

// connOf is the connection a Conn of either client is on: an
// *h2conn.Conn or a *libChannel.
func connOf(c protocol.Conn) any {
	if lc, ok := c.(*libConn); ok {
		return lc.ch
	}
	return connectionOf(c)
}

// takesConns reports whether new Conns may join c's connection: the lean
// client's connection is usable, the library client's channel joinable.
func takesConns(c protocol.Conn) bool {
	if lc, ok := c.(*libConn); ok {
		return lc.d.conns.Joinable(lc.ch)
	}
	return connectionOf(c).Usable()
}

// hasCurrent reports whether either client's Dialer has a current
// connection.
func hasCurrent(d protocol.Dialer) bool {
	switch d := d.(type) {
	case *Dialer:
		return d.core.Current() != nil
	case *libraryDialer:
		return d.conns.Current() != nil
	}
	panic(fmt.Sprintf("%T", d))
}

// waitDelayed waits until the server holds a request in its delay.
func waitDelayed(t *testing.T, srv *grpcecho.Server) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); srv.Delayed() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
}
