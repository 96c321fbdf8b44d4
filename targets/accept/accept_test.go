package accept

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var served atomic.Int64
	ended := make(chan struct{})
	go func() {
		Loop(ln, done, func(c net.Conn) { served.Add(1); c.Close() })
		close(ended)
	}()
	for i := 0; i < 5; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Read(make([]byte, 1)) // returns once the server closed it
		c.Close()
	}
	if served.Load() != 5 {
		t.Errorf("served %d connections, want 5", served.Load())
	}
	close(done)
	ln.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Loop did not return after the listener closed")
	}
}

func TestState(t *testing.T) {
	var s State
	if got := s.Addr("127.0.0.1:0"); got != "127.0.0.1:0" {
		t.Errorf("Addr before Listen = %s", got)
	}
	ln, err := s.Listen("x", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if s.Addr("127.0.0.1:0") != ln.Addr().String() || !s.Started {
		t.Errorf("Addr %s after Listen on %s", s.Addr("127.0.0.1:0"), ln.Addr())
	}
	if _, err := s.Listen("x", "127.0.0.1:0"); err == nil || err.Error() != "x: server already started" {
		t.Errorf("second Listen: %v", err)
	}
	closed := State{Closed: true}
	if _, err := closed.Listen("x", "127.0.0.1:0"); err == nil || err.Error() != "x: server is closed" {
		t.Errorf("Listen after Close: %v", err)
	}
	if _, err := new(State).Listen("x", "256.0.0.1:0"); err == nil {
		t.Error("a bad address was accepted")
	}
}

func TestStateClose(t *testing.T) {
	var s State
	if _, err := s.Listen("x", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if already, err := s.Close(); already || err != nil {
		t.Errorf("first Close: already %v, %v", already, err)
	}
	if _, err := net.Dial("tcp", s.Ln.Addr().String()); err == nil {
		t.Error("the listener still accepts after Close")
	}
	if already, err := s.Close(); !already || err != nil {
		t.Errorf("second Close: already %v, %v", already, err)
	}
}

// The cap admits Max connections at once, rejects the next, and admits
// again once one is released; every accept is counted.
func TestCap(t *testing.T) {
	c := Cap{Max: 2}
	if first, second := c.Admit(), c.Admit(); !first || !second {
		t.Fatal("the first two were not admitted")
	}
	if c.Admit() {
		t.Fatal("a third was admitted over Max 2")
	}
	c.Release()
	if !c.Admit() {
		t.Fatal("not admitted after a release")
	}
	c.Refuse()
	if c.Accepted() != 5 || c.Rejected() != 1 || c.Active() != 2 {
		t.Errorf("accepted %d rejected %d active %d: want 5, 1, 2", c.Accepted(), c.Rejected(), c.Active())
	}
	var none Cap
	for range 100 {
		if !none.Admit() {
			t.Fatal("Max 0 rejected a connection")
		}
	}
}
