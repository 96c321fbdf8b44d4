package tcp_test

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
)

func TestStream(t *testing.T) {
	for _, size := range []int{1, tcp.DefaultSize, 64 << 10, 4 << 20} {
		t.Run(sizeName(size), func(t *testing.T) {
			checkNoLeak(t)
			s := startTarget(t)
			d := newDialer(t, tcp.Stream, s.Addr(), size)
			var written int64
			for range 2 { // two connections, both sinks
				c := dial(t, d)
				for i := range 50 {
					out := c.Do(context.Background(), within())
					if out != (protocol.Outcome{Written: int64(size)}) {
						t.Fatalf("Do #%d = %+v, want %d bytes written", i, out, size)
					}
					written += out.Written
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "the sink to drain", func() bool { return s.Sunk() == uint64(written) })
			if s.Echoed() != 0 {
				t.Fatalf("the target echoed %d bytes of a stream", s.Echoed())
			}
			if d.Opened() != 2 || s.Accepted() != 2 {
				t.Fatalf("Opened = %d, Accepted = %d; want 2", d.Opened(), s.Accepted())
			}
		})
	}
}

func TestStreamTimeout(t *testing.T) {
	checkNoLeak(t)
	// A peer that never reads: the first chunk bigger than the socket
	// buffers cannot be written.
	c := dial(t, newDialer(t, tcp.Stream, silentListener(t), 64<<20))
	out := c.Do(context.Background(), time.Now().Add(30*time.Millisecond))
	if out.Err != protocol.Timeout || !out.Done {
		t.Fatalf("Do = %+v, want Timeout and Done", out)
	}
	if out.Written >= 64<<20 {
		t.Fatalf("Written = %d: the whole chunk went through", out.Written)
	}
}

func TestStreamCloseUnblocksDo(t *testing.T) {
	checkNoLeak(t)
	c := dial(t, newDialer(t, tcp.Stream, silentListener(t), 64<<20))
	ch := doAsync(context.Background(), c, time.Time{})
	blocked(t)
	c.Close()
	if out := waitOutcome(t, ch); out.Err != protocol.Write || !out.Done {
		t.Fatalf("Do aborted by Close = %+v, want Write and Done", out)
	}
}

func TestStreamDialRefused(t *testing.T) {
	d := newDialer(t, tcp.Stream, refusedAddr(t), 100)
	if c, err := d.Dial(context.Background()); err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a closed port")
	}
}
