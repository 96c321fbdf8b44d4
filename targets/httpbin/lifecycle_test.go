package httpbin

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"addr", Config{Addr: "127.0.0.1:8080"}, true},
		{"bad addr", Config{Addr: "localhost"}, false},
		{"negative bytes", Config{MaxBytes: -1}, false},
		{"huge bytes", Config{MaxBytes: 2 << 30}, false},
		{"negative delay", Config{MaxDelay: -time.Second}, false},
		{"negative body", Config{MaxBody: -1}, false},
		{"negative idle", Config{IdleTimeout: -1}, false},
		{"negative max conns", Config{MaxConns: -1}, false},
		{"tls without cert", Config{TLS: &tls.Config{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tc.ok)
			}
			if _, nerr := New(tc.cfg); (nerr == nil) != tc.ok {
				t.Fatalf("New: %v", nerr)
			}
		})
	}
}

func TestStartTwice(t *testing.T) {
	s := start(t, Config{MaxBytes: 1})
	if err := s.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	s.Close()
	if err := s.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseLeavesNothing checks that after Close nothing listens and every
// goroutine the server started has ended, with connections open of every
// kind: idle HTTP/1.1 and h2, TLS, a silent one, one inside a /delay.
func TestCloseLeavesNothing(t *testing.T) {
	round := func() {
		plain, err := newServer(Config{MaxBytes: 1 << 10}, testLoops)
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.Start(); err != nil {
			t.Fatal(err)
		}
		tlsS, tlsC := startTLS(t, Config{MaxBytes: 1 << 10})
		cs := []client{h1Client(plain), h2cClient(plain), tlsC}
		for _, c := range cs {
			do(t, c, "GET", "/bytes/100", nil)
		}
		silent, err := net.Dial("tcp", plain.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
		delayed, err := net.Dial("tcp", plain.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer delayed.Close()
		io.WriteString(delayed, "GET /delay/30 HTTP/1.1\r\nHost: x\r\n\r\n")
		waitFor(t, "the delay to start", func() bool { return plain.counts.waiting.Load() == 1 })

		addr := plain.Addr()
		if err := plain.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := tlsS.Close(); err != nil {
			t.Errorf("Close TLS: %v", err)
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Close", addr)
		}
		for _, c := range cs {
			c.close()
		}
	}
	round() // the first round starts the process-wide goroutines (fasthttp's clock)
	before := runtime.NumGoroutine()
	round()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSilentClient checks that a connection that sends nothing is closed
// after IdleTimeout instead of holding a goroutine forever.
func TestSilentClient(t *testing.T) {
	s := start(t, Config{IdleTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read on a silent connection: %v, want EOF", err)
	}
	waitFor(t, "the connection to be untracked", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) == 0
	})
}

// TestIdleClose checks that a keep-alive HTTP/1.1 connection that falls
// silent after a request is closed about IdleTimeout later; one that keeps
// talking (a request every 50 ms) is not. The timeout leaves the talking one
// 450 ms between requests: a busy two-core machine has kept a thread off the
// CPU for up to 200 ms (see loadgen's TestLoopTimeoutsByDeadline), more than
// the 150 ms a 200 ms timeout left.
func TestIdleClose(t *testing.T) {
	const idle = 500 * time.Millisecond
	s := start(t, Config{IdleTimeout: idle})
	busy, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bbr := bufio.NewReader(busy)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(c net.Conn, br *bufio.Reader) error {
		io.WriteString(c, "GET /bytes/1 HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
		}
		return err
	}
	br := bufio.NewReader(c)
	if err := get(c, br); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	done := make(chan error, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := br.ReadByte()
		done <- err
	}()
	for i := 0; ; i++ { // the busy connection asks every 50 ms meanwhile
		select {
		case err := <-done:
			if err != io.EOF {
				t.Fatalf("silent connection: %v, want EOF", err)
			}
			if el := time.Since(t0); el < idle {
				t.Errorf("closed after %v, before the idle timeout", el)
			}
			if i < 3 {
				t.Fatalf("only %d requests on the busy connection", i)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
		if err := get(busy, bbr); err != nil {
			t.Fatalf("busy connection, request %d: %v", i, err)
		}
	}
}

// TestSniff checks that requests shorter than the HTTP/2 preface, and
// prefaces that arrive in pieces, reach the right server.
func TestSniff(t *testing.T) {
	s := start(t, Config{})
	t.Run("short HTTP/1.0", func(t *testing.T) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /x HTTP/1.0\r\n\r\n") // 19 bytes
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 404 {
			t.Errorf("status %d, want 404", resp.StatusCode)
		}
	})
	t.Run("PRI but HTTP/1", func(t *testing.T) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "PRI * HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode/100 != 4 {
			t.Errorf("status %d, want 4xx", resp.StatusCode)
		}
	})
	t.Run("preface in pieces", func(t *testing.T) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, p := range []string{"PRI", " * HTTP/2.0\r", "\n\r\nSM\r\n\r\n"} {
			io.WriteString(c, p)
			time.Sleep(10 * time.Millisecond)
		}
		// An h2 server answers the preface with a SETTINGS frame: type 4.
		var frame [9]byte
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, frame[:]); err != nil {
			t.Fatal(err)
		}
		if frame[3] != 4 {
			t.Errorf("first frame type %d, want SETTINGS (4)", frame[3])
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, strings.Repeat("GET /bytes/3 HTTP/1.1\r\nHost: x\r\n\r\n", 3))
		br := bufio.NewReader(c)
		for i := range 3 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || len(b) != 3 {
				t.Errorf("response %d: %d, %d bytes", i, resp.StatusCode, len(b))
			}
		}
	})
}

// TestCloseEndsDelay checks that Close does not wait for a /delay to run out;
// the client sees its connection end.
func TestCloseEndsDelay(t *testing.T) {
	s := start(t, Config{})
	c := h2cClient(s)
	defer c.close()
	errc := make(chan error, 1)
	go func() {
		resp, err := c.http.Get(c.base + "/delay/30")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "the delay to start", func() bool { return s.counts.waiting.Load() == 1 })
	s.Close()
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("client still waiting 10 s after Close")
	}
	// An h2 connection's handlers end just after Close (its doc): the
	// 30 s delay must end then, not when its 30 s are up.
	waitFor(t, "the delay to end after Close", func() bool { return s.counts.waiting.Load() == 0 })
}
