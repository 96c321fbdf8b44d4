package http1

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

// BenchmarkDo is one connection, one request at a time, against the
// in-process fasthttp server: the client's cost per request plus a loopback
// round trip and the server's work.
func BenchmarkDo(b *testing.B) {
	fs := startFast(b, nil)
	for _, path := range []string{"/hello", "/big"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			_, c := dial(b, Config{URL: "http://" + fs.addr + path})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if o := c.Do(ctx, time.Now().Add(5*time.Second)); o.Err != protocol.None {
					b.Fatalf("outcome %+v", o)
				}
			}
		})
	}
}

// BenchmarkDoParallel keeps one connection per goroutine busy, like the
// engine's closed loop.
func BenchmarkDoParallel(b *testing.B) {
	fs := startFast(b, nil)
	d, err := NewDialer(Config{URL: "http://" + fs.addr + "/hello"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c, err := d.Dial(context.Background())
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None {
				b.Errorf("outcome %+v", o)
				return
			}
		}
	})
}

// BenchmarkTarget drives an external loopback target named by
// LOADGEN_BENCH_URL (e.g. nginx, as wrk is measured in shared/bench/peers)
// with LOADGEN_BENCH_CONNS connections (default 50), and reports the
// client's requests per CPU-second, the figure wrk is compared by.
func BenchmarkTarget(b *testing.B) {
	url := os.Getenv("LOADGEN_BENCH_URL")
	if url == "" {
		b.Skip("set LOADGEN_BENCH_URL=http://127.0.0.1:PORT/path")
	}
	conns := 50
	if s := os.Getenv("LOADGEN_BENCH_CONNS"); s != "" {
		var err error
		if conns, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	d, err := NewDialer(Config{URL: url})
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	procs := runtime.GOMAXPROCS(0) // RunParallel starts SetParallelism × GOMAXPROCS goroutines
	b.SetParallelism((conns + procs - 1) / procs)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c, err := d.Dial(context.Background())
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None {
				b.Errorf("outcome %+v", o)
				return
			}
		}
	})
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "req/CPU-s")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSessionResponse measures the event loop's parse of one response as
// the bench's nginx sends it (five fields, a 100-byte body), per response.
func BenchmarkSessionResponse(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.26.3\r\nDate: Tue, 01 Dec 2026 22:00:00 GMT\r\n" +
		"Content-Type: text/plain\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n" +
		strings.Repeat("x", 99) + "\n")
	s := &session{req: []byte("GET /100b HTTP/1.1\r\n\r\n")}
	b.SetBytes(int64(len(resp)))
	b.ReportAllocs()
	for b.Loop() {
		if n, done, out := s.Response(resp); n != len(resp) || !done || out.Err != protocol.None {
			b.Fatalf("parsed %d of %d, done %v, %v", n, len(resp), done, out.Err)
		}
	}
}
