package tcp_test

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
)

// lastConnecter is how the engine's goroutines learn of the connect a
// tcp-crr Do made (loadgen's perRequestConn).
type lastConnecter interface {
	LastConnect() (at time.Time, tried bool)
}

func lastConnect(t *testing.T, c protocol.Conn) lastConnecter {
	t.Helper()
	lc, ok := c.(lastConnecter)
	if !ok {
		t.Fatalf("%T has no LastConnect: the engine cannot count its per-request connects", c)
	}
	return lc
}

// Each Do reports its own connect: when it was up, between the Do's start
// and its end; a refused one as tried and failed; none once the Conn is
// closed.
func TestCRRLastConnect(t *testing.T) {
	s := startTarget(t)
	d := newDialer(t, tcp.CRR, s.Addr(), 100)
	c := dial(t, d)
	lc := lastConnect(t, c)
	if at, tried := lc.LastConnect(); tried || !at.IsZero() {
		t.Fatalf("before any Do: LastConnect = %v, %v; want nothing", at, tried)
	}
	for range 3 {
		before := time.Now()
		out := c.Do(context.Background(), within())
		after := time.Now()
		if out.Err != protocol.None {
			t.Fatalf("Do = %+v", out)
		}
		at, tried := lc.LastConnect()
		if !tried || at.Before(before) || at.After(after) {
			t.Fatalf("LastConnect = %v, %v; want a time within the Do (%v to %v)", at, tried, before, after)
		}
	}

	s.Close() // the port now refuses
	if out := c.Do(context.Background(), within()); out.Err != protocol.Connect {
		t.Fatalf("Do against a closed port = %+v, want Connect", out)
	}
	if at, tried := lc.LastConnect(); !tried || !at.IsZero() {
		t.Errorf("after a refused connect: LastConnect = %v, %v; want tried, zero time", at, tried)
	}

	c.Close()
	c.Do(context.Background(), within())
	if at, tried := lc.LastConnect(); tried || !at.IsZero() {
		t.Errorf("Do after Close: LastConnect = %v, %v; want no connect", at, tried)
	}
}

// Only tcp-crr's Conns connect inside Do: tcp-rr's and tcp-stream's are
// counted by their Dial, and must not claim a per-request connect.
func TestOnlyCRRReportsPerRequestConnects(t *testing.T) {
	s := startTarget(t)
	for _, mode := range []tcp.Mode{tcp.RR, tcp.Stream} {
		c := dial(t, newDialer(t, mode, s.Addr(), 100))
		if _, ok := c.(lastConnecter); ok {
			t.Errorf("%s: its Conn has LastConnect", mode)
		}
	}
}
