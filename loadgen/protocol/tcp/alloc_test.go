package tcp_test

import (
	"context"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
)

// Do on an established connection allocates nothing, whether the deadline
// is none, fixed or new each time, and with the engine's cancellable
// context. (tcp-crr dials per Do, which allocates in net.)
func TestDoAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fixed := time.Now().Add(time.Hour)
	deadlines := map[string]func() time.Time{
		"no deadline":    func() time.Time { return time.Time{} },
		"fixed deadline": func() time.Time { return fixed },
		"new deadline":   func() time.Time { return time.Now().Add(10 * time.Second) },
	}
	for _, tc := range []struct {
		mode tcp.Mode
		size int
	}{
		{tcp.RR, 1},
		{tcp.RR, tcp.DefaultSize},
		{tcp.RR, 1 << 20}, // pipelined through the writer goroutine
		{tcp.Stream, tcp.DefaultSize},
		{tcp.Stream, 1 << 20},
	} {
		for name, deadline := range deadlines {
			t.Run(string(tc.mode)+"/"+sizeName(tc.size)+"/"+name, func(t *testing.T) {
				s := startTarget(t)
				c := dial(t, newDialer(t, tc.mode, s.Addr(), tc.size))
				var failed protocol.Outcome
				n := allocs.Count(100, func() {
					if out := c.Do(ctx, deadline()); out.Err != protocol.None {
						failed = out
					}
				})
				if failed.Err != protocol.None {
					t.Fatalf("Do failed: %+v", failed)
				}
				if n > allocs.Slack {
					t.Fatalf("%d allocations in 100 requests, want 0", n)
				}
			})
		}
	}
}

func BenchmarkRR(b *testing.B) {
	for _, size := range []int{tcp.DefaultSize, 64 << 10, 1 << 20} {
		b.Run(sizeName(size), func(b *testing.B) { benchDo(b, tcp.RR, size) })
	}
	// As the engine calls it: a new deadline for every request.
	b.Run("1KiB-deadline", func(b *testing.B) {
		s := startTarget(b)
		c := dial(b, newDialer(b, tcp.RR, s.Addr(), tcp.DefaultSize))
		b.ReportAllocs()
		b.SetBytes(tcp.DefaultSize)
		for b.Loop() {
			if out := c.Do(context.Background(), time.Now().Add(10*time.Second)); out.Err != protocol.None {
				b.Fatalf("Do = %+v", out)
			}
		}
	})
}

func BenchmarkCRR(b *testing.B) {
	for _, size := range []int{tcp.DefaultSize} {
		b.Run(sizeName(size), func(b *testing.B) { benchDo(b, tcp.CRR, size) })
	}
}

func BenchmarkStream(b *testing.B) {
	for _, size := range []int{tcp.DefaultSize, 64 << 10, 1 << 20} {
		b.Run(sizeName(size), func(b *testing.B) { benchDo(b, tcp.Stream, size) })
	}
}

// benchDo times Do against an in-process tcpecho, so ns/op includes the
// server's half on the same machine. MB/s counts one direction.
func benchDo(b *testing.B, mode tcp.Mode, size int) {
	s := startTarget(b)
	c := dial(b, newDialer(b, mode, s.Addr(), size))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		if out := c.Do(ctx, time.Time{}); out.Err != protocol.None {
			b.Fatalf("Do = %+v", out)
		}
	}
}
