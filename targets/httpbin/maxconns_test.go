package httpbin

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"loadgen/targets/tlscert"
)

// MaxConns caps the connections open at once as serve tcp's does: beyond
// it a new one is closed at once and counted; one closing makes room. On
// the event loops (a connection they answer, and one they hand over to
// fasthttp), on the goroutines, and over TLS.
func TestMaxConns(t *testing.T) {
	kinds := []struct {
		name  string
		loops bool
		path  string
	}{
		{"goroutines", false, "/bytes/1"},
		{"loop", true, "/bytes/1"},
		{"loop-handover", true, "/get"},
	}
	for _, k := range kinds {
		if k.loops && !loopSupported {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			s, err := newServer(Config{MaxConns: 1}, k.loops)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			dial := func() net.Conn {
				c, err := net.Dial("tcp", s.Addr())
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(10 * time.Second))
				return c
			}
			get := func(c net.Conn) error {
				if _, err := io.WriteString(c, "GET "+k.path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
					return err
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.Copy(io.Discard, resp.Body)
				return err
			}
			c1 := dial()
			defer c1.Close()
			if err := get(c1); err != nil {
				t.Fatal(err)
			}
			c2 := dial()
			defer c2.Close()
			if n, err := c2.Read(make([]byte, 1)); err == nil {
				t.Fatalf("second connection read %d bytes; want it closed", n)
			}
			if s.Rejected() != 1 || s.Accepted() != 2 {
				t.Fatalf("Rejected = %d, Accepted = %d; want 1, 2", s.Rejected(), s.Accepted())
			}
			if s.Active() != 1 {
				t.Fatalf("Active = %d with one connection open, want 1", s.Active())
			}
			c1.Close()
			waitFor(t, "the first connection to end", func() bool { return s.Active() == 0 })
			c3 := dial()
			defer c3.Close()
			if err := get(c3); err != nil {
				t.Fatalf("after the first connection closed: %v", err)
			}
		})
	}
	t.Run("tls", func(t *testing.T) {
		cert, err := tlscert.New(tlscert.ECDSAP256)
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, Config{MaxConns: 1, TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
		cfg := &tls.Config{RootCAs: cert.Pool(), NextProtos: []string{"http/1.1"}}
		c1, err := tls.Dial("tcp", s.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c1.Close()
		c2, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		c2.SetDeadline(time.Now().Add(10 * time.Second))
		if n, err := c2.Read(make([]byte, 1)); err == nil {
			t.Fatalf("second connection read %d bytes; want it closed", n)
		}
		if s.Rejected() != 1 {
			t.Fatalf("Rejected = %d, want 1", s.Rejected())
		}
		c1.Close()
		waitFor(t, "the first connection to end", func() bool { return s.Active() == 0 })
		c3, err := tls.Dial("tcp", s.Addr(), cfg)
		if err != nil {
			t.Fatalf("after the first connection closed: %v", err)
		}
		c3.Close()
	})
}
