package tcp_test

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
)

func TestRR(t *testing.T) {
	for _, size := range []int{1, 100, tcp.DefaultSize, 64 << 10, 64<<10 + 1, 1 << 20, 5 << 20} {
		t.Run(sizeName(size), func(t *testing.T) {
			checkNoLeak(t)
			s := startTarget(t)
			d := newDialer(t, tcp.RR, s.Addr(), size)
			c := dial(t, d)
			const n = 20
			for i := range n {
				out := c.Do(context.Background(), within())
				want := protocol.Outcome{Bytes: int64(size), Written: int64(size)}
				if out != want {
					t.Fatalf("Do #%d = %+v, want %+v", i, out, want)
				}
			}
			// The server counts a write once it returned, maybe after the client read it.
			eventually(t, "Echoed == n*size", func() bool { return s.Echoed() == uint64(n*size) })
			if s.Accepted() != 1 || d.Opened() != 1 {
				t.Fatalf("Accepted = %d, Opened = %d; want 1 connection", s.Accepted(), d.Opened())
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

func TestRRNoDeadline(t *testing.T) {
	s := startTarget(t)
	c := dial(t, newDialer(t, tcp.RR, s.Addr(), 512))
	for range 3 {
		if out := c.Do(context.Background(), time.Time{}); out.Err != protocol.None || out.Bytes != 512 {
			t.Fatalf("Do = %+v", out)
		}
	}
}

func TestRRDialRefused(t *testing.T) {
	d := newDialer(t, tcp.RR, refusedAddr(t), 100)
	c, err := d.Dial(context.Background())
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a closed port")
	}
	if d.Opened() != 0 {
		t.Fatalf("Opened = %d after a refused dial", d.Opened())
	}
}

func TestRRTimeout(t *testing.T) {
	for _, size := range []int{100, 1 << 20} {
		t.Run(sizeName(size), func(t *testing.T) {
			checkNoLeak(t)
			c := dial(t, newDialer(t, tcp.RR, silentListener(t), size))
			out := c.Do(context.Background(), time.Now().Add(30*time.Millisecond))
			if out.Err != protocol.Timeout || !out.Done {
				t.Fatalf("Do against a silent peer = %+v, want Timeout and Done", out)
			}
			if out.Bytes != 0 {
				t.Fatalf("read %d bytes from a silent peer", out.Bytes)
			}
		})
	}
}

func TestRRDeadlinePassed(t *testing.T) {
	s := startTarget(t)
	c := dial(t, newDialer(t, tcp.RR, s.Addr(), 100))
	out := c.Do(context.Background(), time.Now().Add(-time.Second))
	if out.Err != protocol.Timeout || !out.Done {
		t.Fatalf("Do past its deadline = %+v, want Timeout and Done", out)
	}
}

func TestRRCloseUnblocksDo(t *testing.T) {
	for _, size := range []int{100, 1 << 20} {
		t.Run(sizeName(size), func(t *testing.T) {
			checkNoLeak(t)
			c := dial(t, newDialer(t, tcp.RR, silentListener(t), size))
			ch := doAsync(context.Background(), c, time.Time{})
			blocked(t)
			c.Close()
			out := waitOutcome(t, ch)
			if out.Err == protocol.None || !out.Done {
				t.Fatalf("Do aborted by Close = %+v, want an error and Done", out)
			}
		})
	}
}

func TestRRContextCancelUnblocksDo(t *testing.T) {
	checkNoLeak(t)
	c := dial(t, newDialer(t, tcp.RR, silentListener(t), 100))
	ctx, cancel := context.WithCancel(context.Background())
	ch := doAsync(ctx, c, time.Time{})
	blocked(t)
	cancel()
	if out := waitOutcome(t, ch); out.Err != protocol.Timeout || !out.Done {
		t.Fatalf("Do when the run ends = %+v, want Timeout and Done", out)
	}
	if out := c.Do(ctx, time.Time{}); out.Err != protocol.Timeout || !out.Done {
		t.Fatalf("Do after the run ended = %+v, want Timeout and Done", out)
	}
}

func TestRRPeerCloses(t *testing.T) {
	s := startTarget(t)
	c := dial(t, newDialer(t, tcp.RR, s.Addr(), 100))
	if out := c.Do(context.Background(), within()); out.Err != protocol.None {
		t.Fatalf("Do = %+v", out)
	}
	s.Close()
	out := c.Do(context.Background(), within())
	if (out.Err != protocol.Read && out.Err != protocol.Write) || !out.Done {
		t.Fatalf("Do after the server closed = %+v, want Read or Write and Done", out)
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
