package rpc

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/results"
)

// What the h2 package's frame tests check of its client, here of the gRPC
// one, with the same scripted server (h2peer): both are layers over h2conn
// and must answer a server's frames alike, as RFC 9113 says.

// respond answers a health check on p: SERVING.
func respond(p *h2peer.Peer, id uint32) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.RawLocked(http2.FrameHeaders, http2.FlagHeadersEndHeaders, id, p.Block(":status", "200", "content-type", "application/grpc"))
	p.RawLocked(http2.FrameData, 0, id, []byte{0, 0, 0, 0, 2, 0x08, 0x01})
	p.RawLocked(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id, p.Block("grpc-status", "0"))
}

// Stream errors end the call and keep the connection: the server's
// RST_STREAM, and the responses RFC 9113 calls malformed, which the client
// resets (§8.1.1) — DATA before HEADERS (§8.1), no :status (§8.3.2), a
// zero WINDOW_UPDATE (§6.9) — without waiting for the deadline.
func TestStreamErrors(t *testing.T) {
	addr := h2peer.Start(t, nil, func(p *h2peer.Peer) {
		for i := 0; ; i++ {
			h := p.Request()
			if h == nil {
				return
			}
			switch id := h.StreamID; i {
			case 0:
				p.Raw(http2.FrameRSTStream, 0, id, []byte{0, 0, 0, byte(http2.ErrCodeRefusedStream)})
			case 1:
				p.Raw(http2.FrameRSTStream, 0, id, []byte{0, 0, 0, byte(http2.ErrCodeProtocol)})
			case 2:
				p.Raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id, p.Block("grpc-status", "0"))
			case 3: // no END_STREAM: the client must not wait for one
				p.Raw(http2.FrameData, 0, id, []byte{0, 0, 0, 0, 0})
			case 4:
				p.Raw(http2.FrameWindowUpdate, 0, id, []byte{0, 0, 0, 0})
			default:
				respond(p, id)
			}
		}
	})
	c := dial(t, newDialer(t, Config{Target: addr, Health: true}))
	for i, want := range []struct {
		err    protocol.ErrClass
		status int32
	}{{protocol.Status, 14}, {protocol.Protocol, 13}, {protocol.Protocol, 13}, {protocol.Protocol, 13}, {protocol.Protocol, 13}, {protocol.None, 0}} {
		if o := c.Do(context.Background(), time.Now().Add(hangGuard)); o.Err != want.err || o.Status != want.status || o.Done {
			t.Errorf("call %d: %+v, want %v (status %d) and not Done", i, o, want.err, want.status)
		}
	}
}

// GOAWAY: the call above its last stream was not processed (RFC 9113
// §6.8): Unsent and Done, for the engine to send it again on a new
// connection; the one below completes; a Do afterwards is not sent.
func TestGoAway(t *testing.T) {
	first, once := make(chan struct{}), sync.Once{}
	addr := h2peer.Start(t, nil, func(p *h2peer.Peer) {
		a := p.Request()
		once.Do(func() { close(first) }) // the first connection's first request
		b := p.Request()
		if a == nil || b == nil {
			return
		}
		respond(p, a.StreamID)
		p.GoAway(a.StreamID)
		for p.Request() != nil { // until the client closes
		}
	})
	d := newDialer(t, Config{Target: addr, Health: true, Streams: 2})
	c1, c2 := dial(t, d), dial(t, d)
	done := make(chan protocol.Outcome, 2)
	go func() { done <- c1.Do(context.Background(), time.Now().Add(hangGuard)) }()
	select { // c1 takes stream 1
	case <-first:
	case <-time.After(hangGuard):
		t.Fatal("c1's request never reached the peer")
	}
	go func() { done <- c2.Do(context.Background(), time.Now().Add(hangGuard)) }()
	var ok, unsent int
	for range 2 {
		switch o := <-done; {
		case o.Err == protocol.None:
			ok++
		case o.Unsent && o.Done:
			unsent++
		default:
			t.Errorf("%+v", o)
		}
	}
	if ok != 1 || unsent != 1 {
		t.Errorf("%d answered and %d unsent, want 1 and 1", ok, unsent)
	}
	if o := c1.Do(context.Background(), time.Now().Add(hangGuard)); !o.Unsent || !o.Done || o.Written != 0 {
		t.Errorf("Do after GOAWAY: %+v, want Unsent and Done, nothing written", o)
	}
	dial(t, d)
	if d.Opened() != 2 {
		t.Errorf("Opened = %d: a Dial after GOAWAY must open a new connection", d.Opened())
	}
}

// A server that ends every connection with a GOAWAY after N calls (as
// nginx's keepalive_requests or Envoy's max_requests_per_connection): the
// calls above its last stream are not processed. Through the engine every
// call is answered, none is an error, the generator's count is the
// server's, and there is a connection per N calls — the h2 package's
// TestGoAwayEveryNRequests, on the gRPC client.
// On both drivers: the event loop drives plaintext unary calls itself.
func TestGoAwayEveryNRequests(t *testing.T) {
	for _, drv := range []string{loadgen.DriverLoop, loadgen.DriverGoroutines} {
		t.Run(drv, func(t *testing.T) {
			srv := &h2peer.EveryN{PerConn: 20, Respond: respond}
			addr := h2peer.Start(t, nil, srv.Serve)
			d := newDialer(t, Config{Target: addr, Health: true, Streams: 4})
			var cfg loadgen.Config
			cfg.Target, cfg.Protocol, cfg.Driver = addr, "grpc", drv
			cfg.Connections, cfg.Streams, cfg.Threads = 2, 4, 1
			cfg.Duration = results.Duration(time.Second)
			r, err := loadgen.Run(context.Background(), cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			srv.Check(t, r.Summary, cfg.Connections*cfg.Streams)
		})
	}
}
