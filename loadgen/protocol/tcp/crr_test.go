package tcp_test

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
)

func TestCRR(t *testing.T) {
	for _, size := range []int{1, tcp.DefaultSize, 1 << 20} {
		t.Run(sizeName(size), func(t *testing.T) {
			checkNoLeak(t)
			s := startTarget(t)
			d := newDialer(t, tcp.CRR, s.Addr(), size)
			c := dial(t, d) // the first Dial checks the target with one connection
			if d.Opened() != 1 {
				t.Fatalf("first Dial: Opened = %d, want 1", d.Opened())
			}
			eventually(t, "the server to accept the check", func() bool { return s.Accepted() == 1 })
			c2 := dial(t, d) // the next Dials open nothing
			c2.Close()
			if d.Opened() != 1 {
				t.Fatalf("second Dial: Opened = %d, want 1", d.Opened())
			}
			const n = 25
			for i := range n {
				out := c.Do(context.Background(), within())
				want := protocol.Outcome{Bytes: int64(size), Written: int64(size)}
				if out != want {
					t.Fatalf("Do #%d = %+v, want %+v", i, out, want)
				}
			}
			if s.Accepted() != n+1 || d.Opened() != n+1 {
				t.Fatalf("Accepted = %d, Opened = %d; want %d each (n Dos and the Dial's check)", s.Accepted(), d.Opened(), n+1)
			}
			eventually(t, "Echoed == n*size", func() bool { return s.Echoed() == uint64(n*size) })
			eventually(t, "the server to see every connection closed", func() bool { return s.Active() == 0 })
		})
	}
}

func TestCRRRefused(t *testing.T) {
	d := newDialer(t, tcp.CRR, refusedAddr(t), 100)
	if c, err := d.Dial(context.Background()); err == nil {
		c.Close()
		t.Fatal("first Dial succeeded against a closed port")
	}

	// The target goes away after the first Dial: each Do fails to connect.
	s := startTarget(t)
	d = newDialer(t, tcp.CRR, s.Addr(), 100)
	c := dial(t, d)
	s.Close()
	for range 3 {
		out := c.Do(context.Background(), within())
		if out.Err != protocol.Connect || out.Done {
			t.Fatalf("Do against a closed port = %+v, want Connect, not Done", out)
		}
	}
	if d.Opened() != 1 {
		t.Fatalf("Opened = %d, want 1 (the Dial's check)", d.Opened())
	}
}

func TestCRRTimeout(t *testing.T) {
	checkNoLeak(t)
	c := dial(t, newDialer(t, tcp.CRR, silentListener(t), 100))
	out := c.Do(context.Background(), time.Now().Add(30*time.Millisecond))
	if out.Err != protocol.Timeout || out.Done {
		t.Fatalf("Do against a silent peer = %+v, want Timeout, not Done", out)
	}
}

func TestCRRDeadlinePassed(t *testing.T) {
	s := startTarget(t)
	c := dial(t, newDialer(t, tcp.CRR, s.Addr(), 100))
	if out := c.Do(context.Background(), time.Now().Add(-time.Second)); out.Err != protocol.Timeout {
		t.Fatalf("Do past its deadline = %+v, want Timeout", out)
	}
}

func TestCRRCloseUnblocksDo(t *testing.T) {
	checkNoLeak(t)
	c := dial(t, newDialer(t, tcp.CRR, silentListener(t), 100))
	ch := doAsync(context.Background(), c, time.Time{})
	blocked(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if out := waitOutcome(t, ch); out.Err == protocol.None || !out.Done {
		t.Fatalf("Do aborted by Close = %+v, want an error and Done", out)
	}
	if out := c.Do(context.Background(), time.Time{}); out.Err != protocol.Connect || !out.Done {
		t.Fatalf("Do after Close = %+v, want Connect and Done", out)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCRRContextCancel(t *testing.T) {
	checkNoLeak(t)
	c := dial(t, newDialer(t, tcp.CRR, silentListener(t), 100))
	ctx, cancel := context.WithCancel(context.Background())
	ch := doAsync(ctx, c, time.Time{})
	blocked(t)
	cancel()
	if out := waitOutcome(t, ch); out.Err != protocol.Timeout {
		t.Fatalf("Do when the run ends = %+v, want Timeout", out)
	}
	if out := c.Do(ctx, time.Time{}); out.Err != protocol.Timeout {
		t.Fatalf("Do after the run ended = %+v, want Timeout", out)
	}
}
