package grpc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ggrpc "google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	gproto "google.golang.org/protobuf/proto"

	"loadgen/loadgen/proto"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
	"loadgen/targets/tlscert"
)

func newLibDialer(t *testing.T, cfg Config) *libraryDialer {
	t.Helper()
	d, err := NewLibraryDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d.(*libraryDialer)
}

func dialLib(t *testing.T, d *libraryDialer) proto.Conn {
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

// countingListener counts the connections a server accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// startCounted serves grpc health (SERVING) and the in-flight server's
// PingPong, counting the connections it accepts.
func startCounted(t *testing.T) (addr string, pp *inFlightServer, accepted *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	gs := ggrpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	pp = &inFlightServer{}
	echopb.RegisterEchoServer(gs, pp)
	go gs.Serve(cl)
	t.Cleanup(gs.Stop)
	return ln.Addr().String(), pp, &cl.n
}

func TestLibraryConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Target: "http://127.0.0.1:1"},
		{Target: "127.0.0.1:1", Mode: Stream, Health: true},
		{Target: "127.0.0.1:1", Metadata: []string{"grpc-timeout: 1S"}},
	} {
		if _, err := NewLibraryDialer(cfg); err == nil {
			t.Errorf("NewLibraryDialer(%+v) accepted it", cfg)
		}
	}
}

func TestLibraryUnary(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	var calls uint64
	for _, tc := range []struct {
		name           string
		size, respSize int
		reply          int // reply body bytes
		n              int // calls
	}{
		{"empty", 0, 0, 0, 20},
		{"100B", 100, 0, 100, 20},
		{"1KiB to 64KiB", 1024, 64 << 10, 64 << 10, 20},
		{"1MiB to empty", 1 << 20, -1, 0, 4},
		{"10B to 5MiB", 10, 5 << 20, 5 << 20, 4}, // over grpc-go's default 4 MiB limit
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newLibDialer(t, Config{Target: srv.Addr(), Size: tc.size, ResponseSize: tc.respSize})
			c := dialLib(t, d)
			written := int64(prefixLen + gproto.Size(&echopb.Payload{Body: make([]byte, tc.size), ResponseSize: int32(tc.respSize)}))
			for i := range tc.n {
				deadline := time.Time{}
				if i%2 == 1 {
					deadline = time.Now().Add(hangGuard)
				}
				o := c.Do(context.Background(), deadline)
				if o.Err != proto.None || o.Done || o.Status != 0 {
					t.Fatalf("call %d: %+v", i, o)
				}
				if o.Bytes != wireSize(tc.reply) || o.Written != written {
					t.Fatalf("call %d: %d bytes read, %d written; want %d, %d", i, o.Bytes, o.Written, wireSize(tc.reply), written)
				}
			}
			calls += uint64(tc.n)
			if got := srv.Calls(); got != calls {
				t.Errorf("server Calls = %d, want %d", got, calls)
			}
			if got := d.Opened(); got != 1 {
				t.Errorf("Opened = %d, want 1", got)
			}
		})
	}
}

// A reply of the wrong length is a protocol error, as with the lean client.
func TestLibraryBadReply(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	c := dialLib(t, newLibDialer(t, Config{Target: srv.Addr(), Size: 10}))
	lc := c.(*libConn)
	lc.reply.check.want = 11 // the server echoes 10 bytes
	if o := c.Do(context.Background(), time.Time{}); o.Err != proto.Protocol || o.Bytes != wireSize(10) {
		t.Fatalf("outcome %+v, want a protocol error", o)
	}
}

// -c 2 × Streams 10: 20 Dials share 2 channels, 2 TCP connections as the
// server counts them, closed with their last Conn.
func TestLibraryStreamsShareConnections(t *testing.T) {
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			addr, _, accepted := startCounted(t)
			d := newLibDialer(t, Config{Target: addr, Mode: mode, Health: mode == Unary, Streams: 10, Connections: 2})
			var conns []proto.Conn
			for range 20 {
				conns = append(conns, dialLib(t, d))
			}
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 5 {
						if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
							t.Errorf("Do: %+v", o)
							return
						}
					}
				}()
			}
			wg.Wait()
			if got := d.Opened(); got != 2 {
				t.Errorf("Opened = %d, want 2", got)
			}
			if got := accepted.Load(); got != 2 {
				t.Errorf("the server accepted %d connections, want 2", got)
			}
			chans := map[*libChannel]int{}
			for _, c := range conns {
				chans[c.(*libConn).ch]++
			}
			if len(chans) != 2 {
				t.Errorf("%d channels, want 2", len(chans))
			}
			for ch, n := range chans {
				if n != 10 {
					t.Errorf("a channel has %d Conns, want 10", n)
				}
				if !ch.dialed.Load() {
					t.Error("a channel never dialed")
				}
			}
			for _, c := range conns {
				c.Close()
			}
			d.mu.Lock()
			cur := d.cur
			d.mu.Unlock()
			if cur != nil {
				t.Error("a channel is still current after every Conn was closed")
			}
			for ch := range chans {
				if !ch.broken.Load() {
					t.Error("a channel's connection is still open after every Conn was closed")
				}
			}
		})
	}
}

func TestLibraryPingPong(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	for _, size := range []int{0, 1024, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			before := srv.Messages()
			c := dialLib(t, newLibDialer(t, Config{Target: srv.Addr(), Mode: Stream, Size: size}))
			n := 20
			if size >= 1<<20 {
				n = 4
			}
			for i := range n {
				o := c.Do(context.Background(), time.Now().Add(hangGuard))
				if o.Err != proto.None || o.Done || o.Bytes != wireSize(size) || o.Written != wireSize(size) {
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
}

func TestLibraryPingPongOneInFlight(t *testing.T) {
	srv, addr := startInFlight(t)
	d := newLibDialer(t, Config{Target: addr, Mode: Stream, Size: 10, Streams: 3})
	var wg sync.WaitGroup
	for range 3 {
		c := dialLib(t, d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
					t.Errorf("Do: %+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
	if srv.messages.Load() != 90 {
		t.Errorf("server answered %d messages, want 90", srv.messages.Load())
	}
	if m := srv.max.Load(); m != 1 {
		t.Errorf("up to %d messages in flight on a stream, want 1", m)
	}
	if d.Opened() != 1 {
		t.Errorf("Opened = %d, want 1", d.Opened())
	}
}

func TestLibraryHealth(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	c := dialLib(t, newLibDialer(t, Config{Target: srv.Addr(), Health: true}))
	for i := range 50 {
		if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None || o.Bytes != prefixLen+2 || o.Written != prefixLen {
			t.Fatalf("check %d: %+v", i, o)
		}
	}
	if srv.HealthChecks() != 50 || srv.Calls() != 0 {
		t.Errorf("server: %d health checks, %d echo calls; want 50, 0", srv.HealthChecks(), srv.Calls())
	}
}

func TestLibraryHealthNotServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := ggrpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)

	c := dialLib(t, newLibDialer(t, Config{Target: ln.Addr().String(), Health: true}))
	if o := c.Do(context.Background(), time.Time{}); o.Err != proto.Status || o.Status != 0 || o.Done {
		t.Fatalf("outcome %+v, want a status error", o)
	}
}

func TestLibraryNotEcho(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := ggrpc.NewServer() // no Echo service
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			c := dialLib(t, newLibDialer(t, Config{Target: ln.Addr().String(), Mode: mode}))
			o := c.Do(context.Background(), time.Time{})
			if o.Err != proto.Status || o.Status != 12 || o.Done != (mode == Stream) {
				t.Fatalf("outcome %+v, want status 12 (Unimplemented)", o)
			}
		})
	}
}

func TestLibraryDeadline(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			d := newLibDialer(t, Config{Target: srv.Addr(), Mode: mode})
			c := dialLib(t, d)
			o := c.Do(context.Background(), time.Now().Add(20*time.Millisecond))
			if o.Err != proto.Timeout || !o.Done {
				t.Fatalf("outcome %+v, want a timeout that ends the Conn", o)
			}
			// A deadline already past: a timeout without sending anything.
			o = dialLib(t, d).Do(context.Background(), time.Now().Add(-time.Second))
			if o.Err != proto.Timeout || o.Written != 0 {
				t.Fatalf("outcome %+v with a past deadline", o)
			}
		})
	}
}

func TestLibraryTLS(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, cert.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startEcho(t, grpcecho.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})

	d := newLibDialer(t, Config{Target: srv.Addr(), TLS: proto.TLS{Enabled: true}})
	if _, err = d.Dial(context.Background()); err == nil {
		t.Fatal("Dial verified a self-signed certificate")
	}
	t.Log(err)
	for _, w := range []string{"--insecure", "--cacert", "certificate"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
	if d.Opened() != 0 {
		t.Errorf("Opened = %d after a failed handshake", d.Opened())
	}

	for _, tc := range []struct {
		name string
		tls  proto.TLS
		mode Mode
	}{
		{"insecure", proto.TLS{Enabled: true, Insecure: true}, Unary},
		{"cacert", proto.TLS{Enabled: true, CAFile: caFile}, Unary},
		{"stream", proto.TLS{Enabled: true, Insecure: true}, Stream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialLib(t, newLibDialer(t, Config{Target: srv.Addr(), TLS: tc.tls, Mode: tc.mode, Size: 10}))
			if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
				t.Fatalf("Do: %+v", o)
			}
		})
	}
}

func TestLibraryDialErrors(t *testing.T) {
	// A plain HTTP/1.1 server (net/http without TLS does not speak h2c).
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go hs.Serve(hl)
	t.Cleanup(func() { hs.Close() })

	// A port nobody listens on.
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := rl.Addr().String()
	rl.Close()

	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := startEcho(t, grpcecho.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	plainSrv := startEcho(t, grpcecho.Config{})

	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"http1", Config{Target: hl.Addr().String()}, []string{"gRPC server"}},
		{"http1 stream", Config{Target: hl.Addr().String(), Mode: Stream}, []string{"gRPC server"}},
		{"refused", Config{Target: refused}, []string{"refused"}},
		{"tls target, plaintext client", Config{Target: tlsSrv.Addr()}, []string{"--tls"}},
		{"plaintext target, tls client", Config{Target: plainSrv.Addr(), TLS: proto.TLS{Enabled: true, Insecure: true}}, []string{"TLS handshake"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.DialTimeout = hangGuard
			d := newLibDialer(t, tc.cfg)
			c, err := d.Dial(context.Background())
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if d.Opened() != 0 {
				t.Errorf("Opened = %d after a failed dial", d.Opened())
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.cur != nil {
				t.Error("the failed channel is still current")
			}
		})
	}
}

// A target that accepts and then says nothing: the dial ends with the
// DialTimeout, with an error.
func TestLibraryDialSilentTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	d := newLibDialer(t, Config{Target: ln.Addr().String(), DialTimeout: 100 * time.Millisecond})
	if _, err = d.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "HTTP/2 settings") {
		t.Fatalf("Dial = %v, want it to say the target sent no HTTP/2 settings", err)
	}
}

func TestLibraryCloseUnblocksDo(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			d := newLibDialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 2})
			c, other := dialLib(t, d), dialLib(t, d)
			done := make(chan proto.Outcome)
			go func() { done <- c.Do(context.Background(), time.Time{}) }()
			time.Sleep(20 * time.Millisecond) // let the request leave
			c.Close()
			select {
			case o := <-done:
				if o.Err == proto.None || !o.Done {
					t.Errorf("aborted Do: %+v, want an error and Done", o)
				}
			case <-time.After(hangGuard):
				t.Fatal("Close did not unblock Do")
			}
			if o := c.Do(context.Background(), time.Time{}); !o.Done {
				t.Errorf("Do after Close: %+v", o)
			}
			// The other Conn on the channel lives on.
			if !other.(*libConn).ch.joinable() {
				t.Error("closing one Conn broke the channel of the other")
			}
			if o := other.Do(context.Background(), time.Now().Add(10*time.Millisecond)); o.Err != proto.Timeout {
				t.Errorf("the channel's other Conn: %+v, want a timeout (the server waits an hour)", o)
			}
		})
	}
}

func TestLibraryRunContextEndsDo(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{Delay: time.Hour})
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			c := dialLib(t, newLibDialer(t, Config{Target: srv.Addr(), Mode: mode}))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan proto.Outcome)
			go func() { done <- c.Do(ctx, time.Time{}) }()
			time.Sleep(20 * time.Millisecond)
			cancel()
			select {
			case o := <-done:
				if o.Err != proto.Read || !o.Done {
					t.Errorf("cancelled Do: %+v, want a read error and Done", o)
				}
			case <-time.After(hangGuard):
				t.Fatal("cancelling the run did not unblock Do")
			}
		})
	}
}

// A server that goes away: the Conn's next Do is a read error and Done, and
// the channel does not reconnect.
func TestLibraryServerGone(t *testing.T) {
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startEcho(t, grpcecho.Config{})
			d := newLibDialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 2})
			c := dialLib(t, d)
			if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
				t.Fatalf("Do: %+v", o)
			}
			srv.Close()
			o := c.Do(context.Background(), time.Now().Add(hangGuard))
			if o.Err != proto.Read || !o.Done || o.Status != 14 {
				t.Errorf("Do on a closed server: %+v, want a read error (Unavailable) and Done", o)
			}
			if _, err := d.Dial(context.Background()); err == nil {
				t.Error("Dial joined a broken channel")
			}
			if d.Opened() != 1 {
				t.Errorf("Opened = %d, want 1", d.Opened())
			}
		})
	}
}

// Metadata (-H) reaches the server; "host" becomes the :authority; the
// content-type is grpc-go's for protobuf.
func TestLibraryMetadata(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan metadata.MD, 2)
	gs := ggrpc.NewServer(ggrpc.UnaryInterceptor(func(ctx context.Context, req any, info *ggrpc.UnaryServerInfo, h ggrpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		got <- md
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)

	c := dialLib(t, newLibDialer(t, Config{Target: ln.Addr().String(), Health: true,
		Metadata: []string{"X-Tenant: blue", "Host: echo.example", "User-Agent: lg-test"}}))
	for i := range 2 {
		if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
			t.Fatalf("call %d: %+v", i, o)
		}
		md := <-got
		for k, want := range map[string]string{"x-tenant": "blue", ":authority": "echo.example", "user-agent": "lg-test", "content-type": "application/grpc+proto"} {
			if v := md.Get(k); len(v) != 1 || !strings.HasPrefix(v[0], want) {
				t.Errorf("call %d: %s = %q, want %q", i, k, v, want)
			}
		}
	}
}

// BenchmarkLibraryDo is BenchmarkDo for the library client: compare the two
// to see what grpc-go costs the generator per call.
func BenchmarkLibraryDo(b *testing.B) {
	echo100 := append([]byte{0x0a, 100}, make([]byte, 100)...)
	for _, tc := range []struct {
		name  string
		cfg   Config
		reply []byte
	}{
		{"unary-100B", Config{Size: 100}, echo100},
		{"health", Config{Health: true}, []byte{0x08, 0x01}},
		{"ping-pong-100B", Config{Mode: Stream, Size: 100}, echo100},
	} {
		for _, server := range []string{"fake", "grpcecho"} {
			b.Run(tc.name+"/"+server, func(b *testing.B) {
				cfg := tc.cfg
				if server == "fake" {
					cfg.Target = startFake(b, tc.reply)
				} else {
					s, err := grpcecho.New(grpcecho.Config{})
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Start(); err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					cfg.Target = s.Addr()
				}
				d, err := NewLibraryDialer(cfg)
				if err != nil {
					b.Fatal(err)
				}
				c, err := d.Dial(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if o := c.Do(ctx, time.Now().Add(time.Minute)); o.Err != proto.None {
						b.Fatalf("Do: %+v", o)
					}
				}
			})
		}
	}
}
