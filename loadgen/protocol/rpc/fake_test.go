package rpc

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol/h2wire"
)

// fakeServer is a minimal gRPC server over HTTP/2 that allocates nothing per
// request, so that allocation tests and benchmarks in one process see the
// client's cost alone. It ignores the request headers and answers each
// request message (one per DATA frame) with the same reply; a stream that
// the client ends gets its trailers, grpc-status 0.
type fakeServer struct {
	ln    net.Listener
	reply []byte // prefixed message
	ping  bool   // send a PING after every reply, as grpc-go's BDP estimation does
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startFake(t testing.TB, msg []byte) string {
	return startFakePing(t, msg, false)
}

func startFakePing(t testing.TB, msg []byte, ping bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, prefixLen, prefixLen+len(msg))
	binary.BigEndian.PutUint32(reply[1:], uint32(len(msg)))
	s := &fakeServer{ln: ln, reply: append(reply, msg...), ping: ping}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return ln.Addr().String()
}

// fakeWindow is the fake server's receive window, for the connection and
// each stream.
const fakeWindow = 1 << 30

var (
	fakeHeaders  = h2wire.EncodeRequest([]h2wire.Field{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"}}, 0).Literal
	fakeTrailers = h2wire.EncodeRequest([]h2wire.Field{{Name: "grpc-status", Value: "0"}}, 0).Literal
)

func (s *fakeServer) serve(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	if _, err := io.ReadFull(br, make([]byte, len(h2wire.ClientPreface))); err != nil {
		return
	}
	b := h2wire.AppendSettings(nil, http2.Setting{ID: http2.SettingInitialWindowSize, Val: fakeWindow})
	b = h2wire.AppendWindowUpdate(b, 0, fakeWindow-h2wire.DefaultWindow)
	bw.Write(b)
	bw.Flush()
	started := map[uint32]bool{} // streams whose response headers went out
	buf := make([]byte, 0, 64<<10)
	received := 0
	for {
		h, err := br.Peek(h2wire.FrameHeaderLen)
		if err != nil {
			return
		}
		fh := h2wire.ParseFrameHeader(h)
		n, typ, flags, id := int(fh.Length), fh.Type, fh.Flags, fh.StreamID
		br.Discard(h2wire.FrameHeaderLen)
		p, err := br.Peek(n)
		if err != nil {
			return
		}
		b := buf[:0]
		switch typ {
		case http2.FrameSettings:
			if !flags.Has(http2.FlagSettingsAck) {
				b = h2wire.AppendSettingsAck(b)
			}
		case http2.FramePing:
			if !flags.Has(http2.FlagPingAck) {
				b = h2wire.AppendPingAck(b, p)
			}
		case http2.FrameRSTStream:
			delete(started, id)
		case http2.FrameData:
			received += n
			if received > fakeWindow/2 {
				b = h2wire.AppendWindowUpdate(b, 0, uint32(received))
				received = 0
			}
			if n < prefixLen {
				break
			}
			if !started[id] {
				started[id] = true
				b = h2wire.AppendHeaders(b, id, false, h2wire.DefaultMaxFrame, nil, fakeHeaders)
			}
			b = h2wire.AppendData(b, id, false, h2wire.DefaultMaxFrame, s.reply)
			if flags.Has(http2.FlagDataEndStream) {
				b = h2wire.AppendHeaders(b, id, true, h2wire.DefaultMaxFrame, nil, fakeTrailers)
				delete(started, id)
			}
			if s.ping {
				b = append(h2wire.AppendFrameHeader(b, 8, http2.FramePing, 0, 0), "bdp-ping"...)
			}
		}
		br.Discard(n)
		bw.Write(b)
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}
