package http1

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"testing"

	"loadgen/loadgen/protocol"
)

// Connections waiting for an answer hold no read buffer: they borrow one
// from a pool to parse what arrived. Ten thousand connections to a slow
// target thus cost a few KiB each, not the 16 KiB read buffer and 4 KiB
// scratch each one owned before. Measured as heap in use after a request
// on each of 1000 connections, both ends in this process (the canned
// server below keeps a 256-byte buffer per connection).
func TestConnectionsHoldNoReadBuffer(t *testing.T) {
	const n = 1000
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReaderSize(c, 256)
				for {
					// One request: up to the blank line.
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 {
							break
						}
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	d, err := NewDialer(Config{URL: "http://" + ln.Addr().String() + "/"})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	conns := make([]protocol.Conn, n)
	for i := range conns {
		if conns[i], err = d.Dial(context.Background()); err != nil {
			t.Fatal(err)
		}
		if o := conns[i].Do(context.Background(), soon()); o.Err != protocol.None {
			t.Fatalf("request %d: %+v", i, o)
		}
	}
	per := float64(heap()-before) / n
	for _, c := range conns {
		c.Close()
	}
	t.Logf("%.0f bytes of heap per connection (both ends)", per)
	if per > 8<<10 {
		t.Errorf("%.0f bytes of heap per idle connection (both ends), want < 8 KiB: connections must not own read buffers", per)
	}
}
