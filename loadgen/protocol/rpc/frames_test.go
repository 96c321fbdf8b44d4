package rpc

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
	"loadgen/results"
)

// A scripted HTTP/2 peer for what the h2 package's frame tests check of
// its client, here of the gRPC one: both are layers over h2conn and must
// answer a server's frames alike, as RFC 9113 says.

// framePeer serves each connection with serve after the preface and the
// server's SETTINGS; its next skips SETTINGS, PING and WINDOW_UPDATE.
type framePeer struct {
	t   *testing.T
	fr  *http2.Framer
	buf bytes.Buffer
	enc *hpack.Encoder
	mu  sync.Mutex
}

func startFramePeer(t *testing.T, serve func(p *framePeer)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				p := &framePeer{t: t, fr: http2.NewFramer(c, c)}
				p.enc = hpack.NewEncoder(&p.buf)
				p.fr.ReadMetaHeaders = hpack.NewDecoder(h2wire.DefaultTableSize, nil)
				if _, err := io.ReadFull(c, make([]byte, len(h2wire.ClientPreface))); err != nil {
					return
				}
				p.fr.WriteSettings()
				serve(p)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// request returns the next request's HEADERS, or nil when the connection
// ends; it acks SETTINGS and skips the other frames.
func (p *framePeer) request() *http2.MetaHeadersFrame {
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			return nil
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				p.mu.Lock()
				p.fr.WriteSettingsAck()
				p.mu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			return f
		}
	}
}

func (p *framePeer) block(kv ...string) []byte {
	p.buf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		p.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(p.buf.Bytes())
}

func (p *framePeer) raw(typ http2.FrameType, flags http2.Flags, id uint32, payload []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fr.WriteRawFrame(typ, flags, id, payload)
}

// respond answers a health check: SERVING.
func (p *framePeer) respond(id uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fr.WriteRawFrame(http2.FrameHeaders, http2.FlagHeadersEndHeaders, id, p.block(":status", "200", "content-type", "application/grpc"))
	p.fr.WriteRawFrame(http2.FrameData, 0, id, []byte{0, 0, 0, 0, 2, 0x08, 0x01})
	p.fr.WriteRawFrame(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id, p.block("grpc-status", "0"))
}

// Stream errors end the call and keep the connection: the server's
// RST_STREAM, and the responses RFC 9113 calls malformed, which the client
// resets (§8.1.1) — DATA before HEADERS (§8.1), no :status (§8.3.2), a
// zero WINDOW_UPDATE (§6.9) — without waiting for the deadline.
func TestStreamErrors(t *testing.T) {
	addr := startFramePeer(t, func(p *framePeer) {
		for i := 0; ; i++ {
			h := p.request()
			if h == nil {
				return
			}
			switch id := h.StreamID; i {
			case 0:
				p.raw(http2.FrameRSTStream, 0, id, []byte{0, 0, 0, byte(http2.ErrCodeRefusedStream)})
			case 1:
				p.raw(http2.FrameRSTStream, 0, id, []byte{0, 0, 0, byte(http2.ErrCodeProtocol)})
			case 2:
				p.raw(http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id, p.block("grpc-status", "0"))
			case 3: // no END_STREAM: the client must not wait for one
				p.raw(http2.FrameData, 0, id, []byte{0, 0, 0, 0, 0})
			case 4:
				p.raw(http2.FrameWindowUpdate, 0, id, []byte{0, 0, 0, 0})
			default:
				p.respond(id)
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
	addr := startFramePeer(t, func(p *framePeer) {
		a, b := p.request(), p.request()
		if a == nil || b == nil {
			return
		}
		p.respond(a.StreamID)
		p.mu.Lock()
		p.fr.WriteGoAway(a.StreamID, http2.ErrCodeNo, nil)
		p.mu.Unlock()
		for p.request() != nil { // until the client closes
		}
	})
	d := newDialer(t, Config{Target: addr, Health: true, Streams: 2})
	c1, c2 := dial(t, d), dial(t, d)
	done := make(chan protocol.Outcome, 2)
	go func() { done <- c1.Do(context.Background(), time.Now().Add(hangGuard)) }()
	time.Sleep(10 * time.Millisecond) // c1 takes stream 1
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
func TestGoAwayEveryNRequests(t *testing.T) {
	const perConn = 20
	var served atomic.Int64
	addr := startFramePeer(t, func(p *framePeer) {
		for n := 1; ; n++ {
			h := p.request()
			if h == nil {
				return
			}
			if n > perConn {
				continue // above the GOAWAY's last stream: not processed
			}
			p.respond(h.StreamID)
			served.Add(1)
			if n == perConn {
				p.mu.Lock()
				p.fr.WriteGoAway(h.StreamID, http2.ErrCodeNo, nil)
				p.mu.Unlock()
			}
		}
	})
	d := newDialer(t, Config{Target: addr, Health: true, Streams: 4})
	var cfg loadgen.Config
	cfg.Target, cfg.Protocol = addr, "grpc"
	cfg.Connections, cfg.Streams, cfg.Threads = 2, 4, 1
	cfg.Duration = results.Duration(time.Second)
	r, err := loadgen.Run(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	t.Logf("%d calls, %d served, %d connections", s.Requests, served.Load(), s.Connections.Established)
	if s.Requests < 10*perConn {
		t.Fatalf("%d calls in a second: want many connections' worth", s.Requests)
	}
	if s.Errors.Total() != 0 {
		t.Errorf("errors %+v: a call the server did not process must be sent again, not failed", s.Errors)
	}
	if got, srv := s.Requests, served.Load(); got > srv || srv > got+int64(cfg.Connections*cfg.Streams) {
		t.Errorf("generator counted %d, server served %d", got, srv)
	}
	if want := s.Requests / perConn; s.Connections.Established < want {
		t.Errorf("%d connections for %d calls at %d per connection", s.Connections.Established, s.Requests, perConn)
	}
}
