package tcpecho

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"loadgen/internal/parked"
)

// A backend is one way of serving: event loops (Linux) or a goroutine per
// connection. Every test runs on each one this system has.
type backend struct {
	name  string
	loops bool
	kept  bool // one loop, keeping its P (a P is left beside it)
}

func backends() []backend {
	bs := []backend{{"goroutines", false, false}}
	if loopSupported {
		bs = append(bs, backend{"loops", true, false}, backend{"loops-kept", true, true})
	}
	return bs
}

// each runs f once per backend.
func each(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func start(t *testing.T, b backend, cfg Config) *Server {
	t.Helper()
	if b.kept {
		if runtime.GOMAXPROCS(0) < 2 {
			prev := runtime.GOMAXPROCS(2)
			t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
		}
		cfg.Loops = 1
	}
	s, err := newServer(cfg, b.loops)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if b.loops && s.ev.kept != b.kept {
		t.Fatalf("loops keep their Ps: %v, want %v", s.ev.kept, b.kept)
	}
	return s
}

func dial(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second)) // a hung test fails instead of hanging
	return c
}

// eventually polls cond for a bounded time; it never asserts a speed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestEcho(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		msgs := []string{
			"hello\n",
			"L",                      // a prefix of the magic: answered once the next byte differs
			"LOADGEN-SOMETHING-ELSE", // starts like the magic, is not: echoed whole
			strings.Repeat("x", 300<<10),
		}
		for _, m := range msgs {
			t.Run(m[:min(len(m), 12)], func(t *testing.T) {
				c := dial(t, s)
				if _, err := c.Write([]byte(m)); err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(SinkMagic, m) {
					// A proper prefix of the magic waits for more bytes.
					m2 := "?"
					if _, err := c.Write([]byte(m2)); err != nil {
						t.Fatal(err)
					}
					m += m2
				}
				got := make([]byte, len(m))
				if _, err := io.ReadFull(c, got); err != nil {
					t.Fatal(err)
				}
				if string(got) != m {
					t.Fatalf("echo differs: got %d bytes %.20q…, want %.20q…", len(got), got, m)
				}
			})
		}
	})
}

func TestEchoCounts(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		msg := bytes.Repeat([]byte("abc"), 1000)
		got := make([]byte, len(msg))
		const n = 50
		for range n {
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatal("echo differs")
			}
		}
		// A write is counted once it returned, which may be after the client read it.
		eventually(t, "Echoed to count every message", func() bool { return s.Echoed() == uint64(n*len(msg)) })
		if s.Accepted() != 1 || s.Sunk() != 0 {
			t.Fatalf("Accepted = %d, Sunk = %d; want 1, 0", s.Accepted(), s.Sunk())
		}
	})
}

// TestEchoBackpressure checks that a client that writes far more than the
// sockets hold before it reads gets every byte back, in order: what the
// server could not write at once waits, and so does its reading.
func TestEchoBackpressure(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		msg := make([]byte, 32<<20)
		for i := range msg {
			msg[i] = byte(i * 7 >> 3)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Write(msg)
			errc <- err
		}()
		parked.Wait(t, "IO wait", "net.(*conn).Write(", "TestEchoBackpressure") // both sides' buffers are full
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatal("echo differs")
		}
		eventually(t, "Echoed to count every byte", func() bool { return s.Echoed() == uint64(len(msg)) })
	})
}

// TestEchoThenEOF checks that a client that sends and at once ends its
// writing gets its bytes back, then the end: the server sees the end that
// came with the last bytes, and lets the connection go.
func TestEchoThenEOF(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		for i := range 20 {
			c := dial(t, s)
			msg := strings.Repeat("m", 1+i*97)
			c.Write([]byte(msg))
			c.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || string(got) != msg {
				t.Fatalf("round %d: read %d bytes, %v; want %d and the end", i, len(got), err, len(msg))
			}
			c.Close()
		}
		eventually(t, "every connection to end", func() bool { return s.Active() == 0 })
	})
}

func TestSink(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		// The magic split across writes is still the magic.
		for _, part := range []string{SinkMagic[:3], SinkMagic[3:9], SinkMagic[9:] + "abc"} {
			if _, err := c.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		payload := bytes.Repeat([]byte{'z'}, 1<<20)
		for range 5 {
			if _, err := c.Write(payload); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
		want := uint64(3 + 5*len(payload))
		eventually(t, "the sink to drain", func() bool { return s.Sunk() == want })
		if s.Echoed() != 0 {
			t.Fatalf("a sink echoed %d bytes", s.Echoed())
		}
	})
}

func TestSinkWritesNothing(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		if _, err := c.Write([]byte(SinkMagic + "data")); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the sink to read", func() bool { return s.Sunk() == 4 })
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if n, err := c.Read(make([]byte, 16)); n != 0 || !isTimeout(err) {
			t.Fatalf("read from a sink: %d bytes, %v; want nothing until the deadline", n, err)
		}
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestMaxConns(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{MaxConns: 1})
		c1 := dial(t, s)
		if _, err := c1.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c1, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		c2 := dial(t, s)
		if n, err := c2.Read(make([]byte, 1)); err == nil {
			t.Fatalf("second connection read %d bytes; want it closed", n)
		}
		if s.Rejected() != 1 || s.Accepted() != 2 {
			t.Fatalf("Rejected = %d, Accepted = %d; want 1, 2", s.Rejected(), s.Accepted())
		}
		c1.Close()
		eventually(t, "the first connection to end", func() bool { return s.Active() == 0 })
		c3 := dial(t, s)
		if _, err := c3.Write([]byte("y")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c3, make([]byte, 1)); err != nil {
			t.Fatalf("after the first connection closed: %v", err)
		}
	})
}

func TestCloseEndsEverything(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		before := runtime.NumGoroutine()
		s, err := newServer(Config{}, b.loops)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		echo := dial(t, s)
		echo.Write([]byte("x"))
		io.ReadFull(echo, make([]byte, 1))
		sink := dial(t, s)
		sink.Write([]byte(SinkMagic))
		idle := dial(t, s) // never sends: still sniffing
		eventually(t, "three connections", func() bool { return s.Active() == 3 })

		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		for _, c := range []net.Conn{echo, sink, idle} {
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("a connection survived Close")
			}
		}
		if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
			t.Fatal("the listener survived Close")
		}
		eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
		if err := s.Start(); err == nil {
			t.Fatal("Start after Close succeeded")
		}
	})
}

func TestStartTwice(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		if err := s.Start(); err == nil {
			t.Fatal("second Start succeeded")
		}
	})
}

func TestConfig(t *testing.T) {
	for _, cfg := range []Config{{MaxConns: -1}, {Addr: "no-port"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != DefaultAddr {
		t.Fatalf("Addr before Start = %q, want %q", s.Addr(), DefaultAddr)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		in   string
		want kind
	}{
		{"", undecided},
		{"L", undecided},
		{SinkMagic[:len(SinkMagic)-1], undecided},
		{SinkMagic, isSink},
		{SinkMagic + "more", isSink},
		{"l", isEcho},
		{"LOADGEN-SINK/2", isEcho},
		{"GET / HTTP/1.1\r\n", isEcho},
	}
	for _, tt := range tests {
		if got := sniff([]byte(tt.in)); got != tt.want {
			t.Errorf("sniff(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func BenchmarkEcho1K(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			s, err := newServer(Config{}, be.loops)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := bytes.Repeat([]byte("a"), 1024)
			got := make([]byte, len(msg))
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// pingPong makes n round trips of a 1 KiB message on c, each echo checked.
func pingPong(t *testing.T, c net.Conn, n int) error {
	msg := bytes.Repeat([]byte("0123456789abcdef"), 64)
	got := make([]byte, len(msg))
	for i := range n {
		msg[0] = byte(i)
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if !bytes.Equal(got, msg) {
			t.Errorf("round trip %d: echo differs", i)
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

// While one connection is served solo, a new one is still accepted and
// answered: the solo reads give the loop back its other events within
// soloRounds messages.
func TestSoloStillAccepts(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		a := dial(t, s)
		if err := pingPong(t, a, 10); err != nil { // a is solo from here
			t.Fatal(err)
		}
		stop := make(chan struct{})
		running := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					running <- nil
					return
				default:
				}
				if err := pingPong(t, a, 1); err != nil {
					running <- err
					return
				}
			}
		}()
		n := dial(t, s)
		if _, err := n.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 2)
		_, err := io.ReadFull(n, got)
		select {
		case aerr := <-running:
			t.Fatalf("the solo connection stopped (%v) before the new one was answered", aerr)
		default:
		}
		close(stop)
		if err != nil || string(got) != "hi" {
			t.Fatalf("new connection: %q, %v", got, err)
		}
		if aerr := <-running; aerr != nil {
			t.Fatalf("solo connection: %v", aerr)
		}
	})
}

// Close ends a loop that serves one connection solo, while that
// connection goes on echoing.
func TestSoloClose(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		if err := pingPong(t, c, 10); err != nil { // solo from here
			t.Fatal(err)
		}
		ended := make(chan error, 1)
		echoed := s.Echoed()
		go func() { ended <- pingPong(t, c, 1<<30) }() // until Close ends it
		eventually(t, "the connection to go on echoing", func() bool { return s.Echoed() > echoed })
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return in 5 s")
		}
		if err := <-ended; err == nil {
			t.Fatal("the connection survived Close")
		}
	})
}

// Alone gives the loops every processor there was and the process one
// more, and restore puts it back; the rest of the config stays.
func TestAlone(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		cfg, restore := Config{Addr: "127.0.0.1:0", MaxConns: 7, Loops: 3}.Alone()
		if want := (Config{Addr: "127.0.0.1:0", MaxConns: 7, Loops: procs}); cfg != want {
			t.Errorf("GOMAXPROCS %d: Alone() = %+v, want %+v", procs, cfg, want)
		}
		if got := runtime.GOMAXPROCS(0); got != procs+1 {
			t.Errorf("GOMAXPROCS %d: Alone leaves %d, want %d", procs, got, procs+1)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != procs {
			t.Errorf("GOMAXPROCS %d: restore leaves %d", procs, got)
		}
	}
}
