package udp

import (
	"context"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/loadgen/protocol"
	"loadgen/targets/udpecho"
)

// Do on an open connection allocates nothing, whether the deadline is
// none, fixed or new each time (the target, in this process, counts too).
func TestDoAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	srv, err := udpecho.New(udpecho.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fixed := time.Now().Add(time.Hour)
	deadlines := map[string]func() time.Time{
		"no deadline":    func() time.Time { return time.Time{} },
		"fixed deadline": func() time.Time { return fixed },
		"new deadline":   func() time.Time { return time.Now().Add(10 * time.Second) },
	}
	for _, mode := range []Mode{RR, Stream} {
		for _, size := range []int{1, DefaultSize, MaxSize} {
			for name, deadline := range deadlines {
				t.Run(string(mode)+"/"+name, func(t *testing.T) {
					d, err := NewDialer(Config{Addr: srv.Addr(), Mode: mode, Size: size})
					if err != nil {
						t.Fatal(err)
					}
					c, err := d.Dial(ctx)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
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
						t.Fatalf("%d allocations in 100 requests of %d bytes, want 0", n, size)
					}
				})
			}
		}
	}
}
