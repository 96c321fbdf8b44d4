package h2

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

// TestLoad drives an external target like the engine's closed loop does and
// prints requests per generator CPU-second, for comparison with h2load:
//
//	LOADGEN_H2_LOAD=http://127.0.0.1:8081/ C=50 M=10 D=5s taskset -c 0 ./http2.test -test.run TestLoad -test.v
//
// Optional: INSECURE=1 for https:// targets with self-signed certificates.
func TestLoad(t *testing.T) {
	url := os.Getenv("LOADGEN_H2_LOAD")
	if url == "" {
		t.Skip("LOADGEN_H2_LOAD not set")
	}
	conns, streams := envInt("C", 50), envInt("M", 1)
	dur, _ := time.ParseDuration(os.Getenv("D"))
	if dur <= 0 {
		dur = 5 * time.Second
	}
	cfg := Config{URL: url, Streams: streams, Cleartext: url[:5] == "http:"}
	cfg.TLS.Insecure = os.Getenv("INSECURE") != ""
	d, err := NewDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	u0, s0 := cpuTimes()
	t0 := time.Now()
	for i := 0; i < conns*streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c protocol.Conn
			for {
				select {
				case <-stop:
					if c != nil {
						c.Close()
					}
					return
				default:
				}
				if c == nil {
					var err error
					if c, err = d.Dial(ctx); err != nil {
						t.Error(err)
						return
					}
				}
				o := c.Do(ctx, time.Now().Add(5*time.Second))
				if o.Err != protocol.None {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
				if o.Done {
					c.Close()
					c = nil
				}
			}
		}()
	}
	time.Sleep(dur)
	close(stop)
	wg.Wait()
	el := time.Since(t0)
	u1, s1 := cpuTimes()
	if ok.Load() == 0 || failed.Load() != 0 {
		t.Errorf("%d requests answered, %d failed: a load run against %s must answer every request", ok.Load(), failed.Load(), url)
	}
	cpu := u1 - u0 + s1 - s0
	n := ok.Load()
	t.Logf("c%d m%d %v: %d ok, %d failed, %.0f req/s, CPU %.2fs (user %.2fs, sys %.2fs), %.0f req per CPU-second, %d connections opened",
		conns, streams, el.Round(time.Millisecond), n, failed.Load(), float64(n)/el.Seconds(), cpu.Seconds(),
		(u1 - u0).Seconds(), (s1 - s0).Seconds(), float64(n)/cpu.Seconds(), d.Opened())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func cpuTime() time.Duration {
	u, s := cpuTimes()
	return u + s
}

func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
