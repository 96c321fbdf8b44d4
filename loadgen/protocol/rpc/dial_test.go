package rpc

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"loadgen/internal/testport"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
	"loadgen/targets/tlscert"
)

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
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	pp = &inFlightServer{}
	echopb.RegisterEchoServer(gs, pp)
	go gs.Serve(cl)
	t.Cleanup(gs.Stop)
	return ln.Addr().String(), pp, &cl.n
}

// -c 2 × Streams 10: 20 Dials share 2 connections, 2 TCP connections as the
// server counts them, closed with their last Conn.
func TestStreamsShareConnections(t *testing.T) {
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		addr, _, accepted := startCounted(t)
		d := cl.dialer(t, Config{Target: addr, Mode: mode, Health: mode == Unary, Streams: 10, Connections: 2})
		var conns []protocol.Conn
		for range 20 {
			conns = append(conns, dial(t, d))
		}
		doAll(t, conns, 10, 0)
		if got := d.Opened(); got != 2 {
			t.Errorf("Opened = %d, want 2", got)
		}
		if got := accepted.Load(); got != 2 {
			t.Errorf("the server accepted %d connections, want 2", got)
		}
		shared := map[any]int{} // an *h2conn.Conn or a *libChannel: its Conns
		for _, c := range conns {
			shared[connOf(c)]++
		}
		if len(shared) != 2 {
			t.Errorf("%d connections, want 2", len(shared))
		}
		for x, n := range shared {
			if n != 10 {
				t.Errorf("a connection has %d Conns, want 10", n)
			}
			if ch, ok := x.(*libChannel); ok && !ch.dialed.Load() {
				t.Error("a channel never dialed")
			}
		}
		for _, c := range conns {
			c.Close()
		}
		if hasCurrent(d) {
			t.Error("a connection is still current after every Conn was closed")
		}
		for x := range shared {
			switch x := x.(type) {
			case *h2conn.Conn:
				if x.Usable() {
					t.Error("a connection is still usable after every Conn was closed")
				}
			case *libChannel:
				if !x.broken.Load() {
					t.Error("a channel's connection is still open after every Conn was closed")
				}
			}
		}
	})
}

func TestDialErrors(t *testing.T) {
	// A plain HTTP/1.1 server (net/http without TLS does not speak h2c).
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go hs.Serve(hl)
	t.Cleanup(func() { hs.Close() })

	// A TCP server that closes every connection at once.
	closing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closing.Close() })
	go func() {
		for {
			c, err := closing.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	// A port nobody listens on.
	refused := testport.Closed(t)

	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := startEcho(t, grpcecho.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	plainSrv := startEcho(t, grpcecho.Config{})

	// An HTTPS server that speaks HTTP/1.1 only.
	h1l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h1s := &http.Server{
		Handler:      http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		TLSConfig:    &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}, // no h2
	}
	go h1s.ServeTLS(h1l, "", "")
	t.Cleanup(func() { h1s.Close() })

	// What each client's error says: the lean client tells more, as it sees
	// the bytes the target sent; grpc-go keeps less of them.
	cases := []struct {
		name          string
		cfg           Config
		lean, library []string
	}{
		{"http1", Config{Target: hl.Addr().String()}, []string{"HTTP/1", "not a gRPC server"}, []string{"gRPC server"}},
		{"closes", Config{Target: closing.Addr().String()}, []string{"the connection without an HTTP/2 answer", "--tls"}, []string{"gRPC server", "--tls"}},
		{"refused", Config{Target: refused}, []string{"refused"}, []string{"refused"}},
		{"tls target, plaintext client", Config{Target: tlsSrv.Addr()}, []string{"--tls"}, []string{"--tls"}},
		{"plaintext target, tls client", Config{Target: plainSrv.Addr(), TLS: protocol.TLS{Enabled: true, Insecure: true}}, []string{"plaintext", "drop --tls"}, []string{"TLS handshake"}},
		{"stream mode", Config{Target: hl.Addr().String(), Mode: Stream}, []string{"HTTP/1"}, []string{"gRPC server"}},
		{"https http/1.1 only", Config{Target: h1l.Addr().String(), TLS: protocol.TLS{Enabled: true, Insecure: true}}, []string{"HTTP/2", "not a gRPC server"}, []string{"TLS handshake", "HTTP/2", "not a gRPC server"}},
	}
	eachClient(t, func(t *testing.T, cl client) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.cfg.DialTimeout = hangGuard
				d := cl.dialer(t, tc.cfg)
				c, err := d.Dial(context.Background())
				if err == nil {
					c.Close()
					t.Fatal("Dial succeeded")
				}
				msg := err.Error()
				t.Log(msg)
				for _, w := range pick(cl, tc.lean, tc.library) {
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
				if hasCurrent(d) {
					t.Error("the failed connection is still current")
				}
			})
		}
	})
}

// A target that accepts and then says nothing: the dial ends with the
// DialTimeout, with an error.
func TestDialSilentTarget(t *testing.T) {
	addr := h2peer.Serve(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	eachClient(t, func(t *testing.T, cl client) {
		d := cl.dialer(t, Config{Target: addr, DialTimeout: 200 * time.Millisecond})
		want := pick(cl, "sent nothing before the dial deadline", "before it answered with HTTP/2 settings")
		if _, err := d.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Dial = %v, want it to say %q", err, want)
		}
	})
}

func TestTLS(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, cert.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startEcho(t, grpcecho.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})

	eachClient(t, func(t *testing.T, cl client) {
		d := cl.dialer(t, Config{Target: srv.Addr(), TLS: protocol.TLS{Enabled: true}})
		_, err := d.Dial(context.Background())
		if err == nil {
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
			tls  protocol.TLS
			mode Mode
		}{
			{"insecure", protocol.TLS{Enabled: true, Insecure: true}, Unary},
			{"cacert", protocol.TLS{Enabled: true, CAFile: caFile}, Unary},
			{"cacert localhost", protocol.TLS{Enabled: true, CAFile: caFile, ServerName: "localhost"}, Unary},
			{"stream", protocol.TLS{Enabled: true, CAFile: caFile}, Stream},
			{"stream insecure", protocol.TLS{Enabled: true, Insecure: true}, Stream},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), TLS: tc.tls, Mode: tc.mode, Size: 10}))
				if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.None {
					t.Fatalf("Do: %+v", o)
				}
			})
		}
	})
}

// A Dial whose context ends first fails, whatever the DialTimeout.
func TestDialContext(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	eachClient(t, func(t *testing.T, cl client) {
		d := cl.dialer(t, Config{Target: srv.Addr()})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if c, err := d.Dial(ctx); err == nil {
			c.Close()
			t.Fatal("Dial with a cancelled context succeeded")
		}
	})
}
