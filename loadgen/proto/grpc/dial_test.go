package grpc

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen/proto"
	"loadgen/targets/grpcecho"
	"loadgen/targets/tlscert"
)

func TestStreamsShareConnections(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(string(mode), func(t *testing.T) {
			d := newDialer(t, Config{Target: srv.Addr(), Mode: mode, Streams: 10})
			var conns []proto.Conn
			for range 20 {
				conns = append(conns, dial(t, d))
			}
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 10 {
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
			chans := map[*transport]int{}
			for _, c := range conns {
				chans[transportOf(c)]++
			}
			if len(chans) != 2 {
				t.Errorf("%d connections, want 2", len(chans))
			}
			for _, c := range conns {
				c.Close()
			}
			d.mu.Lock()
			cur := d.cur
			d.mu.Unlock()
			if cur != nil {
				t.Error("a connection is still current after every Conn was closed")
			}
			for tr := range chans {
				if tr.usable() {
					t.Error("a connection is still usable after every Conn was closed")
				}
			}
		})
	}
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
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	go func() {
		for {
			c, err := cl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

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

	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"http1", Config{Target: hl.Addr().String()}, []string{"HTTP/1", "not a gRPC server"}},
		{"closes", Config{Target: cl.Addr().String()}, []string{"the connection without an HTTP/2 answer", "--tls"}},
		{"refused", Config{Target: refused}, []string{"refused"}},
		{"tls target, plaintext client", Config{Target: tlsSrv.Addr()}, []string{"--tls"}},
		{"plaintext target, tls client", Config{Target: plainSrv.Addr(), TLS: proto.TLS{Enabled: true, Insecure: true}}, []string{"plaintext", "drop --tls"}},
		{"stream mode", Config{Target: hl.Addr().String(), Mode: Stream}, []string{"HTTP/1"}},
		{"https http/1.1 only", Config{Target: h1l.Addr().String(), TLS: proto.TLS{Enabled: true, Insecure: true}}, []string{"HTTP/2", "not a gRPC server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.DialTimeout = 10 * time.Second
			d := newDialer(t, tc.cfg)
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
func TestDialSilentTarget(t *testing.T) {
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
	d := newDialer(t, Config{Target: ln.Addr().String(), DialTimeout: 200 * time.Millisecond})
	_, err = d.Dial(context.Background())
	if err == nil || !strings.Contains(err.Error(), "sent nothing before the dial deadline") {
		t.Fatalf("Dial = %v, want it to say the target sent nothing", err)
	}
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

	d := newDialer(t, Config{Target: srv.Addr(), TLS: proto.TLS{Enabled: true}})
	_, err = d.Dial(context.Background())
	if err == nil {
		t.Fatal("Dial verified a self-signed certificate")
	}
	t.Log(err)
	for _, w := range []string{"--insecure", "--cacert", "certificate"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}

	for _, tc := range []struct {
		name string
		tls  proto.TLS
		mode Mode
	}{
		{"insecure", proto.TLS{Enabled: true, Insecure: true}, Unary},
		{"cacert", proto.TLS{Enabled: true, CAFile: caFile}, Unary},
		{"cacert localhost", proto.TLS{Enabled: true, CAFile: caFile, ServerName: "localhost"}, Unary},
		{"stream", proto.TLS{Enabled: true, CAFile: caFile}, Stream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, newDialer(t, Config{Target: srv.Addr(), TLS: tc.tls, Mode: tc.mode, Size: 10}))
			if o := c.Do(context.Background(), time.Time{}); o.Err != proto.None {
				t.Fatalf("Do: %+v", o)
			}
		})
	}
}

// A Dial whose context ends first fails, whatever the DialTimeout.
func TestDialContext(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	d := newDialer(t, Config{Target: srv.Addr()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := d.Dial(ctx); err == nil {
		c.Close()
		t.Fatal("Dial with a cancelled context succeeded")
	}
}
