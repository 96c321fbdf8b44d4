package tcp_test

import (
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"loadgen/internal/parked"
	"loadgen/internal/testport"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/targets/tcpecho"
)

// startTarget runs a tcpecho server on 127.0.0.1:0 for the test.
func startTarget(tb testing.TB) *tcpecho.Server {
	tb.Helper()
	s, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func newDialer(tb testing.TB, mode tcp.Mode, addr string, size int) *tcp.Dialer {
	tb.Helper()
	d, err := tcp.NewDialer(tcp.Config{Addr: addr, Mode: mode, Size: size, DialTimeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func dial(tb testing.TB, d *tcp.Dialer) protocol.Conn {
	tb.Helper()
	c, err := d.Dial(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// silentListener accepts connections and never reads or writes; it closes
// them when the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// refusedAddr is a loopback address where nothing can listen while the
// test runs.
func refusedAddr(t *testing.T) string { return testport.Closed(t) }

// within is a generous deadline for requests that must succeed; it bounds a
// broken test, it asserts no speed.
func within() time.Time { return time.Now().Add(10 * time.Second) }

// eventually polls cond for a bounded time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// checkNoLeak fails the test if goroutines started during it outlive it.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	})
}

// doAsync runs c.Do in a goroutine and hands back its outcome.
func doAsync(ctx context.Context, c protocol.Conn, deadline time.Time) <-chan protocol.Outcome {
	ch := make(chan protocol.Outcome, 1)
	go func() { ch <- c.Do(ctx, deadline) }()
	return ch
}

// waitOutcome waits (boundedly) for an aborted Do to return.
func waitOutcome(t *testing.T, ch <-chan protocol.Outcome) protocol.Outcome {
	t.Helper()
	select {
	case out := <-ch:
		return out
	case <-time.After(10 * time.Second):
		t.Fatal("Do did not return")
		return protocol.Outcome{}
	}
}

// blocked waits until a Do started in the background waits on the network
// (parked in the netpoller: a dial, read or write that cannot go on), so
// that what the test does next aborts a Do in progress, not one yet to
// begin.
func blocked(t *testing.T) {
	t.Helper()
	parked.Wait(t, "IO wait", "loadgen/loadgen/protocol/tcp.(*", "Conn).Do(")
}
