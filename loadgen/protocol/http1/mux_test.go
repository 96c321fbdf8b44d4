package http1

import (
	"testing"

	"loadgen/loadgen/protocol"
)

// muxFeed gives m the bytes b as a loop would have read them.
func muxFeed(m protocol.Mux, b string) []int32 {
	return m.Filled(copy(m.ReadBuf(), b))
}

// The one-slot Mux that carries HTTP/1.1 over TLS on a loop: a response
// per request, and what ends the connection.
func TestMuxOneRequestAtATime(t *testing.T) {
	d, err := NewDialer(Config{URL: "https://127.0.0.1:9/x"})
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, m protocol.Mux) {
		t.Helper()
		if how, _ := m.Start(0); how != protocol.MuxStarted {
			t.Fatal("not started")
		}
		out := m.Output()
		if len(out) == 0 || string(out[:6]) != "GET /x" {
			t.Fatalf("Output %q: want the request", out)
		}
		m.Wrote(len(out))
		if len(m.Output()) != 0 {
			t.Fatal("the request is written twice")
		}
	}
	t.Run("kept alive, in pieces", func(t *testing.T) {
		m := d.Mux(1)
		for range 2 {
			start(t, m)
			if done := muxFeed(m, "HTTP/1.1 200 OK\r\nContent-Le"); len(done) != 0 {
				t.Fatal("ended on half a header")
			}
			if done := muxFeed(m, "ngth: 2\r\n\r\nok"); len(done) != 1 || done[0] != 0 {
				t.Fatalf("ended %v", done)
			}
			if o := m.Outcome(0); o.Err != protocol.None || o.Status != 200 || o.Done || !m.Usable() {
				t.Fatalf("outcome %+v, usable %v", o, m.Usable())
			}
			if m.(*mux).rbuf != nil {
				t.Fatal("the connection keeps its read buffer between reads")
			}
		}
	})
	t.Run("Connection: close", func(t *testing.T) {
		m := d.Mux(1)
		start(t, m)
		muxFeed(m, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		if o := m.Outcome(0); o.Err != protocol.None || !o.Done || m.Usable() || m.Dead() {
			t.Fatalf("outcome %+v, usable %v, dead %v: want answered, then no more requests", o, m.Usable(), m.Dead())
		}
		if how, o := m.Start(0); how != protocol.MuxRefused || !o.Unsent {
			t.Fatalf("a request on a closing connection: %d %+v", how, o)
		}
	})
	t.Run("bytes past the response", func(t *testing.T) {
		m := d.Mux(1)
		start(t, m)
		muxFeed(m, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n")
		if o := m.Outcome(0); o.Err != protocol.Protocol || !m.Dead() {
			t.Fatalf("outcome %+v, dead %v", o, m.Dead())
		}
	})
	t.Run("bytes nothing asked for", func(t *testing.T) {
		m := d.Mux(1)
		if done := muxFeed(m, "HTTP/1.1 408 Request Timeout\r\n\r\n"); len(done) != 0 || !m.Dead() {
			t.Fatalf("ended %v, dead %v", done, m.Dead())
		}
		muxFeed(m, "")
		if !m.Dead() {
			t.Fatal("a dead connection came back to life")
		}
	})
	t.Run("body to the close", func(t *testing.T) {
		m := d.Mux(1)
		start(t, m)
		muxFeed(m, "HTTP/1.0 200 OK\r\n\r\nall of it")
		if done := m.Fail(protocol.Read); len(done) != 1 {
			t.Fatalf("ended %v", done)
		}
		if o := m.Outcome(0); o.Err != protocol.None || o.Status != 200 || !m.Dead() {
			t.Fatalf("outcome %+v, dead %v: the close ends the response", o, m.Dead())
		}
	})
	t.Run("peer gone mid-header", func(t *testing.T) {
		m := d.Mux(1)
		start(t, m)
		muxFeed(m, "HTTP/1.1 200")
		m.Fail(protocol.Read)
		if o := m.Outcome(0); o.Err != protocol.Read || !m.Dead() {
			t.Fatalf("outcome %+v", o)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		m := d.Mux(1)
		start(t, m)
		if o := m.Cancel(0); o.Err != protocol.Timeout || !m.Dead() || m.Usable() {
			t.Fatalf("outcome %+v, dead %v: a timed-out request takes its connection", o, m.Dead())
		}
	})
}
