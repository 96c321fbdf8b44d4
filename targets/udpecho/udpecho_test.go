package udpecho

import (
	"net"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// exchange sends msg and returns the answer.
func exchange(t *testing.T, c net.Conn, msg string) string {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1<<16)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no answer to %q: %v", msg, err)
	}
	return string(buf[:n])
}

// An echo source gets each datagram back, counted; a probe is answered
// and counted nowhere; a sink source's datagrams are counted, and its
// count is told, in the order they came.
func TestEchoAndSink(t *testing.T) {
	s := start(t, Config{})
	echo, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	if got := exchange(t, echo, Control+Ping); got != Control+OK {
		t.Fatalf("ping: %q", got)
	}
	for _, m := range []string{"a", strings.Repeat("x", 9000)} {
		if got := exchange(t, echo, m); got != m {
			t.Fatalf("echo of %d bytes: %d back", len(m), len(got))
		}
	}
	if s.Echoed() != 2 || s.EchoedBytes() != 9001 {
		t.Errorf("echoed %d (%d bytes), want 2 (9001)", s.Echoed(), s.EchoedBytes())
	}
	sink, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if got := exchange(t, sink, Control+Open); got != Control+OK {
		t.Fatalf("open: %q", got)
	}
	const n, size = 50, 100
	for range n {
		sink.Write([]byte(strings.Repeat("d", size)))
	}
	if got, want := exchange(t, sink, Control+Count), Control+Count+" 50 5000"; got != want {
		t.Errorf("count: %q, want %q", got, want)
	}
	if s.Sunk() != n || s.SunkBytes() != n*size || s.Echoed() != 2 {
		t.Errorf("sunk %d (%d bytes), echoed %d", s.Sunk(), s.SunkBytes(), s.Echoed())
	}
}

// DropEvery drops exactly every Nth data datagram, control ones aside.
func TestDropEvery(t *testing.T) {
	s := start(t, Config{DropEvery: 4})
	sink, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	exchange(t, sink, Control+Open)
	for range 40 {
		sink.Write([]byte("d"))
	}
	if got := exchange(t, sink, Control+Count); got != Control+Count+" 30 30" || s.Dropped() != 10 {
		t.Errorf("count %q, dropped %d; want 30 of 40 and 10 dropped", got, s.Dropped())
	}
	if err := (Config{DropEvery: -1}).Validate(); err == nil {
		t.Error("a negative drop-every: no error")
	}
}

// An answer in the peer's hands is already counted: a run reads the
// server's figures right after its last answer.
func TestEchoCountedBeforeItIsAnswered(t *testing.T) {
	s := start(t, Config{})
	c, err := net.Dial("udp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := uint64(1); i <= 3000; i++ {
		exchange(t, c, "e")
		if got := s.Echoed(); got != i {
			t.Fatalf("after answer %d the server counts %d", i, got)
		}
	}
}
