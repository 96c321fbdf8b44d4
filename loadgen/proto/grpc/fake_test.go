package grpc

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
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

var (
	fakeHeaders  = appendLiteral([]byte{0x88}, 4, 0, headerField{nameIndex: 31, value: "application/grpc"})
	fakeTrailers = appendLiteral(nil, 4, 0, headerField{name: "grpc-status", value: "0"})
)

func (s *fakeServer) serve(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	if _, err := io.ReadFull(br, make([]byte, len(clientPreface))); err != nil {
		return
	}
	b := appendFrameHeader(nil, 6, frameSettings, 0, 0)
	b = appendSetting(b, settingInitialWindowSize, recvWindow)
	b = appendWindowUpdate(b, 0, recvWindow-defaultWindow)
	bw.Write(b)
	bw.Flush()
	started := map[uint32]bool{} // streams whose response headers went out
	buf := make([]byte, 0, 64<<10)
	received := 0
	for {
		h, err := br.Peek(frameHeaderLen)
		if err != nil {
			return
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, id := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		br.Discard(frameHeaderLen)
		p, err := br.Peek(n)
		if err != nil {
			return
		}
		b := buf[:0]
		switch typ {
		case frameSettings:
			if flags&flagAck == 0 {
				b = appendFrameHeader(b, 0, frameSettings, flagAck, 0)
			}
		case framePing:
			if flags&flagAck == 0 {
				b = append(appendFrameHeader(b, 8, framePing, flagAck, 0), p...)
			}
		case frameRSTStream:
			delete(started, id)
		case frameData:
			received += n
			if received > recvWindow/2 {
				b = appendWindowUpdate(b, 0, uint32(received))
				received = 0
			}
			if n < prefixLen {
				break
			}
			if !started[id] {
				started[id] = true
				b = appendHeaders(b, id, fakeHeaders, false, defaultMaxFrame)
			}
			b = appendData(b, id, s.reply, false, defaultMaxFrame)
			if flags&flagEndStream != 0 {
				b = appendHeaders(b, id, fakeTrailers, true, defaultMaxFrame)
				delete(started, id)
			}
			if s.ping {
				b = append(appendFrameHeader(b, 8, framePing, 0, 0), "bdp-ping"...)
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
