package rpc

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/targets/grpcecho"
)

// Benchmarks against the zero-allocation fake server (the client's cost,
// mostly) and against grpcecho (a real grpc-go server in the same process:
// the sum of both), for each client: compare lean and library to see what
// grpc-go costs the generator per call. Every Do has a deadline, as the
// engine's do.
func BenchmarkDo(b *testing.B) {
	echo100 := append([]byte{0x0a, 100}, make([]byte, 100)...)
	for _, cl := range clients {
		for _, tc := range []struct {
			name  string
			cfg   Config
			reply []byte
		}{
			{"unary-100B", Config{Size: 100}, echo100},
			{"health", Config{Health: true}, []byte{0x08, 0x01}},
			{"ping-pong-100B", Config{Mode: Stream, Size: 100}, echo100},
		} {
			for _, server := range []string{"fake", "grpcecho"} {
				b.Run(cl.name+"/"+tc.name+"/"+server, func(b *testing.B) {
					cfg := tc.cfg
					if server == "fake" {
						cfg.Target = startFake(b, tc.reply)
					} else {
						s, err := grpcecho.New(grpcecho.Config{})
						if err != nil {
							b.Fatal(err)
						}
						if err := s.Start(); err != nil {
							b.Fatal(err)
						}
						b.Cleanup(func() { s.Close() })
						cfg.Target = s.Addr()
					}
					c, err := cl.dialer(b, cfg).Dial(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					defer c.Close()
					ctx := context.Background()
					b.ReportAllocs()
					for b.Loop() {
						if o := c.Do(ctx, time.Now().Add(time.Minute)); o.Err != protocol.None {
							b.Fatalf("Do: %+v", o)
						}
					}
				})
			}
		}
	}
}

// BenchmarkParallel runs about 50 Conns at once, as -c 50 does: on as
// many connections (m1) or on one (m50).
func BenchmarkParallel(b *testing.B) {
	reply := []byte{0x08, 0x01}
	procs := runtime.GOMAXPROCS(0)
	par := (50 + procs - 1) / procs
	n := par * procs // RunParallel's goroutines: one Conn each
	for _, streams := range []int{1, n} {
		b.Run(fmt.Sprintf("health-c%d-m%d", n/streams, streams), func(b *testing.B) {
			d, err := NewDialer(Config{Target: startFake(b, reply), Health: true, Streams: streams})
			if err != nil {
				b.Fatal(err)
			}
			conns := make(chan protocol.Conn, n)
			for range n {
				c, err := d.Dial(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				conns <- c
			}
			b.ReportAllocs()
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				c := <-conns
				ctx := context.Background()
				for pb.Next() {
					if o := c.Do(ctx, time.Now().Add(time.Minute)); o.Err != protocol.None {
						b.Errorf("Do: %+v", o)
						return
					}
				}
			})
		})
	}
}
