//lint:file-ignore SA1019 grpc-go over x/net's h2c server is the reference peer of these tests

package rpc

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
)

// plainEcho is an Echo service on a stock grpc-go server (default flow
// control windows), counting the calls it serves at once.
type plainEcho struct {
	echopb.UnimplementedEchoServer
	hold     time.Duration
	active   atomic.Int64
	max      atomic.Int64
	pingStop int // PingPong fails after this many replies (0: never)
}

func (e *plainEcho) Unary(ctx context.Context, in *echopb.Payload) (*echopb.Payload, error) {
	n := e.active.Add(1)
	defer e.active.Add(-1)
	for old := e.max.Load(); n > old && !e.max.CompareAndSwap(old, n); old = e.max.Load() {
	}
	time.Sleep(e.hold)
	return &echopb.Payload{Body: in.Body}, nil
}

func (e *plainEcho) PingPong(st echopb.Echo_PingPongServer) error {
	for i := 1; ; i++ {
		m, err := st.Recv()
		if err != nil {
			return nil
		}
		if err := st.Send(m); err != nil {
			return err
		}
		if i == e.pingStop {
			return status.Error(codes.ResourceExhausted, "enough")
		}
	}
}

func startPlain(t *testing.T, e *plainEcho, opts ...grpc.ServerOption) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(opts...)
	echopb.RegisterEchoServer(gs, e)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

// Messages larger than the peer's windows wait for its WINDOW_UPDATEs.
func TestLargeMessages(t *testing.T) {
	echo := startEcho(t, grpcecho.Config{}) // 4 MiB windows
	plain := startPlain(t, &plainEcho{}, grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	for _, tc := range []struct {
		name   string
		target string
		mode   Mode
		size   int
	}{
		{"grpcecho unary 8MiB", echo.Addr(), Unary, 8 << 20},
		{"grpcecho ping-pong 8MiB", echo.Addr(), Stream, 8 << 20},
		{"stock windows unary 1MiB", plain, Unary, 1 << 20},
		{"stock windows unary 9MiB", plain, Unary, 9 << 20},
		{"stock windows ping-pong 3MiB", plain, Stream, 3 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, newDialer(t, Config{Target: tc.target, Mode: tc.mode, Size: tc.size}))
			for i := range 3 {
				o := c.Do(context.Background(), time.Now().Add(hangGuard))
				if o.Err != protocol.None || o.Bytes != wireSize(tc.size) {
					t.Fatalf("request %d: %+v, want %d bytes", i, o, wireSize(tc.size))
				}
			}
		})
	}
}

// More Conns on a connection than the server allows streams: calls wait
// for a slot instead of failing.
func TestMaxConcurrentStreams(t *testing.T) {
	e := &plainEcho{hold: time.Millisecond}
	addr := startPlain(t, e, grpc.MaxConcurrentStreams(2))
	d := newDialer(t, Config{Target: addr, Streams: 6})
	conns := make([]protocol.Conn, 6)
	for i := range conns {
		conns[i] = dial(t, d)
	}
	doAll(t, conns, 20, hangGuard)
	if m := e.max.Load(); m > 2 {
		t.Errorf("the server ran %d calls at once, above its limit of 2", m)
	}
	if d.Opened() != 1 {
		t.Errorf("Opened = %d, want 1", d.Opened())
	}
}

// A server that rotates connections (GOAWAY, as Envoy's max connection
// duration or NGINX's keepalive_requests do): no call fails for it. A call
// the server did not process is Unsent, and Done: sent again on a new
// connection, as the engine does, outside the call (no dial inside Do).
func TestGoAwayRehome(t *testing.T) {
	addr := startPlain(t, &plainEcho{}, grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge: 30 * time.Millisecond, MaxConnectionAgeGrace: hangGuard,
	}))
	d := newDialer(t, Config{Target: addr, Streams: 2})
	conns := []protocol.Conn{dial(t, d), dial(t, d)}
	stop := time.Now().Add(hangGuard)
	calls, unsent := 0, 0
	for d.Opened() < 4 && time.Now().Before(stop) {
		for i, c := range conns {
			o := c.Do(context.Background(), time.Now().Add(hangGuard))
			switch {
			case o.Unsent && o.Done:
				unsent++ // sent again below, on the new Conn
			case o.Err != protocol.None:
				t.Fatalf("call %d on a rotating server: %+v", calls, o)
			}
			calls++
			if o.Done {
				c.Close()
				conns[i] = dial(t, d)
			}
		}
	}
	if d.Opened() < 4 {
		t.Fatalf("%d connections in %d calls: the server never rotated", d.Opened(), calls)
	}
	t.Logf("%d calls, %d sent again, on %d connections", calls, unsent, d.Opened())
}

// Stream IDs used up: the call on the last stream ID is Done (RFC 9113
// §5.1.1: new streams need a new connection), and the next goes to a new
// connection, which the engine dials on Done.
func TestStreamIDsUsedUp(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	d := newDialer(t, Config{Target: srv.Addr()})
	c := dial(t, d)
	tr := connectionOf(c)
	tr.SkipStreamIDs(h2wire.MaxStreamID)
	for i := range 3 {
		o := c.Do(context.Background(), time.Time{})
		if o.Err != protocol.None {
			t.Fatalf("call %d: %+v", i, o)
		}
		if i == 0 && !o.Done {
			t.Fatalf("call %d on the last stream ID: %+v, want Done", i, o)
		}
		if o.Done {
			c = dial(t, d)
		}
	}
	if d.Opened() != 2 {
		t.Errorf("Opened = %d, want 2", d.Opened())
	}
	if tr.Usable() {
		t.Error("the used-up connection is still usable")
	}
	// A Do on the used-up connection is not sent: Unsent, for the engine to
	// send on a new connection.
	c2 := dial(t, newDialer(t, Config{Target: srv.Addr()}))
	connectionOf(c2).SkipStreamIDs(h2wire.MaxStreamID + 2)
	if o := c2.Do(context.Background(), time.Time{}); !o.Unsent || !o.Done || o.Written != 0 {
		t.Errorf("Do past the last stream ID: %+v, want Unsent, Done and nothing written", o)
	}
}

// The server ends a ping-pong stream with an error status: the Conn is
// done, the status is reported, and a new Dial gets a new stream.
func TestPingPongServerEnds(t *testing.T) {
	addr := startPlain(t, &plainEcho{pingStop: 2})
	d := newDialer(t, Config{Target: addr, Mode: Stream, Size: 10})
	c := dial(t, d)
	var got []protocol.Outcome
	for o := (protocol.Outcome{}); !o.Done; {
		o = c.Do(context.Background(), time.Now().Add(hangGuard))
		got = append(got, o)
		if len(got) > 3 {
			t.Fatalf("stream still going: %+v", got)
		}
	}
	last := got[len(got)-1]
	if got[0].Err != protocol.None || (last.Err != protocol.None && (last.Err != protocol.Status || last.Status != int32(codes.ResourceExhausted))) {
		t.Errorf("outcomes %+v, want replies then status %d", got, codes.ResourceExhausted)
	}
	c.Close()
	if o := dial(t, d).Do(context.Background(), time.Time{}); o.Err != protocol.None {
		t.Errorf("on a new stream: %+v", o)
	}
}

// HTTP/2 servers that are not gRPC: a proxy's error page, a 200 of HTML.
func TestNotGRPCAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		ctype  string
		err    protocol.ErrClass
		code   int32
	}{
		{"503", 503, "text/plain", protocol.Status, 14},
		{"404", 404, "text/html", protocol.Status, 12},
		{"200 html", 200, "text/html", protocol.Protocol, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				w.Write([]byte("<html>no</html>"))
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hs := &http.Server{Handler: h2c.NewHandler(h, &http2.Server{})}
			go hs.Serve(ln)
			t.Cleanup(func() { hs.Close() })
			c := dial(t, newDialer(t, Config{Target: ln.Addr().String(), Size: 10}))
			o := c.Do(context.Background(), time.Now().Add(hangGuard))
			if o.Err != tc.err || o.Status != tc.code || o.Done {
				t.Errorf("outcome %+v, want %v with status %d", o, tc.err, tc.code)
			}
		})
	}
}

// A server that stops reading: a request stuck in a write still ends at
// its deadline.
func TestDeadlineCutsStuckWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		conns <- c
		// Settings with huge windows, then read the preface and nothing more.
		b := h2wire.AppendSettings(nil, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
		b = h2wire.AppendWindowUpdate(b, 0, 1<<31-1-h2wire.DefaultWindow)
		c.Write(b)
		io.ReadFull(c, make([]byte, len(h2wire.ClientPreface)))
	}()
	c := dial(t, newDialer(t, Config{Target: ln.Addr().String(), Size: 48 << 20}))
	defer func() {
		select {
		case sc := <-conns:
			sc.Close()
		default:
		}
	}()
	done := make(chan protocol.Outcome)
	go func() { done <- c.Do(context.Background(), time.Now().Add(100*time.Millisecond)) }()
	select {
	case o := <-done:
		if o.Err != protocol.Timeout || !o.Done {
			t.Errorf("outcome %+v, want a timeout", o)
		}
	case <-time.After(hangGuard):
		t.Fatal("a stuck write ignored the deadline")
	}
}

// Every goroutine a Dialer starts ends with its last Conn.
func TestNoGoroutineLeft(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	before := runtime.NumGoroutine()
	for _, mode := range []Mode{Unary, Stream} {
		d := newDialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 3})
		var conns []protocol.Conn
		for range 7 {
			c, err := d.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c.Do(context.Background(), time.Now().Add(time.Minute))
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
	}
	deadline := time.Now().Add(hangGuard)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// A Do allocates nothing, with or without a deadline (against a server
// that allocates nothing either, since the count is the process's).
func TestDoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	echo100 := append([]byte{0x0a, 100}, make([]byte, 100)...)
	for _, tc := range []struct {
		name  string
		cfg   Config
		reply []byte
		ping  bool
	}{
		{"unary", Config{Size: 100}, echo100, false},
		{"health", Config{Health: true}, []byte{0x08, 0x01}, false},
		{"ping-pong", Config{Mode: Stream, Size: 100}, echo100, false},
		{"unary, 2 streams", Config{Size: 100, Streams: 2}, echo100, false},
		{"unary, server pings", Config{Size: 100}, echo100, true},
		{"ping-pong, server pings", Config{Mode: Stream, Size: 100}, echo100, true},
		{"call", Config{Call: unaryMethod, Message: echo100}, echo100, false},
		{"ping-pong call", Config{Mode: Stream, Call: pingPongMethod, Message: echo100}, echo100, false},
		{"server-streaming", Config{Mode: ServerStream, Size: 100, Messages: 1}, echo100, false},
		{"client-streaming", Config{Mode: ClientStream, Size: 100, Messages: 5}, echo100, false},
	} {
		tc.cfg.Target = startFakePing(t, tc.reply, tc.ping)
		c := dial(t, newDialer(t, tc.cfg))
		if mc, ok := c.(protocol.MessageConn); ok {
			mc.SetMessageSink(new(sinkCount)) // timed, as the engine's
		}
		for _, timed := range []bool{false, true} {
			ctx := context.Background()
			c.Do(ctx, time.Time{}) // warm up: the link to ctx
			n := allocs.Count(200, func() {
				var deadline time.Time
				if timed {
					deadline = time.Now().Add(time.Minute)
				}
				if o := c.Do(ctx, deadline); o.Err != protocol.None {
					t.Fatalf("Do: %+v", o)
				}
			})
			if n > allocs.Slack {
				t.Errorf("%s, deadline %v: %d allocations in 200 Dos, want 0", tc.name, timed, n)
			}
		}
	}
}
