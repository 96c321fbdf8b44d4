// Package h2peer is a scripted, frame-level HTTP/2 server on loopback for
// the tests of loadgen's HTTP/2 clients (h2, rpc): a test says frame by
// frame what the server sends, to see what a client makes of it.
package h2peer

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"loadgen/loadgen/protocol/h2wire"
)

// Serve accepts connections on 127.0.0.1 and runs serve on each, in a
// goroutine; the test's cleanup closes the listener and the connections
// and waits for serve to return. It returns the address.
func Serve(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
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
				serve(c)
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

// Peer is one connection of the scripted server.
type Peer struct {
	T  testing.TB
	C  net.Conn
	Fr *http2.Framer
	Mu sync.Mutex // serializes writes

	buf bytes.Buffer
	enc *hpack.Encoder
}

// New makes a Peer of c, reading its client's header blocks with a
// default table, before the preface.
func New(t testing.TB, c net.Conn) *Peer {
	p := &Peer{T: t, C: c, Fr: http2.NewFramer(c, c)}
	p.enc = hpack.NewEncoder(&p.buf)
	p.Fr.ReadMetaHeaders = hpack.NewDecoder(h2wire.DefaultTableSize, nil)
	return p
}

// Start serves each connection with serve after the client's preface and
// the server's SETTINGS.
func Start(t testing.TB, settings []http2.Setting, serve func(p *Peer)) string {
	return Serve(t, func(c net.Conn) { start(t, c, settings, serve) })
}

// StartTLS is Start over TLS with cfg (its certificate; ALPN h2 is set).
func StartTLS(t testing.TB, cfg *tls.Config, settings []http2.Setting, serve func(p *Peer)) string {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	return Serve(t, func(c net.Conn) {
		tc := tls.Server(c, cfg)
		if tc.Handshake() != nil {
			return
		}
		start(t, tc, settings, serve)
	})
}

func start(t testing.TB, c net.Conn, settings []http2.Setting, serve func(p *Peer)) {
	p := New(t, c)
	preface := make([]byte, len(h2wire.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != h2wire.ClientPreface {
		return
	}
	p.Fr.WriteSettings(settings...)
	serve(p)
}

// Next returns the next frame that is not a SETTINGS, PING or
// WINDOW_UPDATE (those are acked, answered or ignored), or nil when the
// connection ends.
func (p *Peer) Next() http2.Frame {
	for {
		f, err := p.Fr.ReadFrame()
		if err != nil {
			if err != io.EOF && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
				p.T.Errorf("server: %v", err)
			}
			return nil
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				p.Mu.Lock()
				p.Fr.WriteSettingsAck()
				p.Mu.Unlock()
			}
		case *http2.PingFrame:
			if !f.IsAck() { // x/net's client waits for the answer
				p.Mu.Lock()
				p.Fr.WritePing(true, f.Data)
				p.Mu.Unlock()
			}
		case *http2.WindowUpdateFrame:
		default:
			return f
		}
	}
}

// Request returns the next request's HEADERS, skipping other frames, or
// nil when the connection ends.
func (p *Peer) Request() *http2.MetaHeadersFrame {
	for {
		f := p.Next()
		if f == nil {
			return nil
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			return h
		}
	}
}

// Block HPACK-encodes name, value pairs with the connection's encoder:
// blocks must be written in the order they are encoded.
func (p *Peer) Block(kv ...string) []byte {
	p.buf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		p.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(p.buf.Bytes())
}

// Raw writes one frame and returns its wire size.
func (p *Peer) Raw(typ http2.FrameType, flags http2.Flags, id uint32, payload []byte) int64 {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return p.RawLocked(typ, flags, id, payload)
}

// RawLocked is Raw with Mu held.
func (p *Peer) RawLocked(typ http2.FrameType, flags http2.Flags, id uint32, payload []byte) int64 {
	if err := p.Fr.WriteRawFrame(typ, flags, id, payload); err != nil && !errors.Is(err, net.ErrClosed) {
		p.T.Errorf("server write: %v", err)
	}
	return int64(h2wire.FrameHeaderLen + len(payload))
}

// Respond answers a stream with a status and a body of n bytes, and
// returns the frames' wire size. It may be called from several
// goroutines.
func (p *Peer) Respond(id uint32, status string, n int) int64 {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	sent := p.RawLocked(http2.FrameHeaders, http2.FlagHeadersEndHeaders, id, p.Block(":status", status))
	return sent + p.RawLocked(http2.FrameData, http2.FlagDataEndStream, id, make([]byte, n))
}

// GoAway writes a GOAWAY naming last.
func (p *Peer) GoAway(last uint32) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.Fr.WriteGoAway(last, http2.ErrCodeNo, nil)
}
