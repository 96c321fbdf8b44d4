package h2conn

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"loadgen/loadgen/protocol/h2wire"
)

// discardConn is a net.Conn that takes every write and has nothing to
// read: the frame reader is fed by the test, not the network.
type discardConn struct{ net.Conn }

func (discardConn) Read([]byte) (int, error)         { return 0, errors.New("no reads") }
func (discardConn) Write(p []byte) (int, error)      { return len(p), nil }
func (discardConn) Close() error                     { return nil }
func (discardConn) SetDeadline(time.Time) error      { return nil }
func (discardConn) SetReadDeadline(time.Time) error  { return nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }

// checkHandler checks the order of the calls it gets: fields within a
// block, a block per header block, nothing after the stream ended.
type checkHandler struct {
	t       *testing.T
	s       *Stream
	fields  int
	headers bool
	trailer bool
	data    int
}

func (h *checkHandler) Field(name int, value []byte) {
	if name < 0 || name > 1 {
		h.t.Fatalf("field %d: only 2 were asked for", name)
	}
	h.fields++
}

func (h *checkHandler) Block(kind BlockKind, status int32) {
	switch {
	case h.s.finished:
		h.t.Fatalf("block %d for a stream that ended", kind)
	case kind == BlockHeaders && (h.headers || status < 200 || status > 999):
		h.t.Fatalf("headers (status %d) again, or with a bad status", status)
	case kind == BlockTrailers && (!h.headers || h.trailer):
		h.t.Fatal("trailers before headers, or twice")
	}
	h.headers = h.headers || kind == BlockHeaders
	h.trailer = h.trailer || kind == BlockTrailers
	h.fields = 0
}

func (h *checkHandler) Data(p []byte) {
	if !h.headers || h.trailer || h.s.finished {
		h.t.Fatal("DATA outside a response's body")
	}
	h.data += len(p)
}

func (h *checkHandler) Ready() bool   { return false }
func (h *checkHandler) Settle(Result) {}

// hblock HPACK-encodes name, value pairs (without indexing: each block
// stands alone).
func hblock(kv ...string) []byte {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	enc.SetMaxDynamicTableSizeLimit(0)
	for i := 0; i+1 < len(kv); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return hb.Bytes()
}

// frame appends a frame.
func frame(b []byte, typ http2.FrameType, flags http2.Flags, id uint32, p []byte) []byte {
	return append(h2wire.AppendFrameHeader(b, len(p), typ, flags, id), p...)
}

// seedSettings is a server's first SETTINGS.
func seedSettings() []byte {
	return h2wire.AppendSettings(nil, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100},
		http2.Setting{ID: http2.SettingHeaderTableSize, Val: 100})
}

// seedOK is SETTINGS, then a gRPC response on stream 1: headers, a
// 7-byte message, trailers.
func seedOK() []byte {
	ok := frame(seedSettings(), http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, hblock(":status", "200", "content-type", "application/grpc"))
	ok = frame(ok, http2.FrameData, 0, 1, []byte{0, 0, 0, 0, 2, 8, 1})
	return frame(ok, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 1, hblock("grpc-status", "0"))
}

// seedMixed returns a seed: on stream 3 a 103 in a padded HEADERS and a
// CONTINUATION, then a 404 with priority, padded DATA ending it; then a
// WINDOW_UPDATE and a RST_STREAM (CANCEL) for stream 5, and a PING.
func seedMixed() []byte {
	cont := hblock(":status", "103", "link", "</a>")
	seq := frame(seedSettings(), http2.FrameHeaders, http2.FlagHeadersPadded, 3, append(append([]byte{2}, cont[:2]...), 0, 0))
	seq = frame(seq, http2.FrameContinuation, http2.FlagContinuationEndHeaders, 3, cont[2:])
	seq = frame(seq, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersPriority, 3, append([]byte{0, 0, 0, 1, 9}, hblock(":status", "404")...))
	seq = frame(seq, http2.FrameData, http2.FlagDataPadded|http2.FlagDataEndStream, 3, []byte{3, 'x', 0, 0, 0})
	seq = frame(seq, http2.FrameWindowUpdate, 0, 5, []byte{0, 0, 1, 0})
	seq = frame(seq, http2.FramePing, 0, 0, make([]byte, 8))
	return frame(seq, http2.FrameRSTStream, 0, 5, []byte{0, 0, 0, 8})
}

// seedGoAway returns a seed: DATA before HEADERS on stream 1, a zero
// WINDOW_UPDATE on stream 3, a GOAWAY whose last stream is 3, then HEADERS
// for 3 (reset).
func seedGoAway() []byte {
	ga := frame(seedSettings(), http2.FrameData, http2.FlagDataEndStream, 1, []byte("early"))
	ga = frame(ga, http2.FrameWindowUpdate, 0, 3, []byte{0, 0, 0, 0})
	ga = frame(ga, http2.FrameGoAway, 0, 0, []byte{0, 0, 0, 3, 0, 0, 0, 0})
	return frame(ga, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 3, hblock(":status", "200"))
}

// FuzzFrames feeds the frame reader whatever a server might send, cut in
// reads of any size, on a connection with three streams in flight. It
// must not panic; it stops at a connection error and at nothing else; and
// the connection's books stay straight: the streams in flight are those
// not ended, windows stay within 2^31-1, and what the client wrote back
// is whole frames.
func FuzzFrames(f *testing.F) {
	f.Add(uint8(7), seedOK())
	f.Add(uint8(5), seedMixed())
	f.Add(uint8(1), seedGoAway())
	f.Add(uint8(0), []byte("HTTP/1.1 400 Bad Request\r\n\r\n"))

	f.Fuzz(func(t *testing.T, cut uint8, in []byte) { feedFrames(t, cut, in) })
}

// feedFrames feeds in to a connection with streams 1, 3 and 5 in flight,
// in reads of cut%64+1 bytes, checks the connection's books, and returns
// the connection and the error that stopped the reader, if any.
func feedFrames(t *testing.T, cut uint8, in []byte) (*Conn, error) {
	d := NewDialer(Config{Streams: 3, Fields: []h2wire.Field{{Name: ":method", Value: "GET"}}, Want: []string{"content-type", "grpc-status"}})
	c := newConn(d, false)
	c.raw, c.nc = discardConn{}, discardConn{}
	c.wbuf = c.wbuf[:0]
	for i := range 3 {
		h := &checkHandler{t: t}
		s := c.attach(h)
		h.s = s
		s.id, s.finished, s.sendWindow = uint32(2*i+1), false, h2wire.DefaultWindow
	}
	c.nextID, c.active = 7, 3
	step := int(cut)%64 + 1
	var err error
	for len(in) > 0 && err == nil {
		c.compact()
		n := copy(c.rbuf[c.rend:], in[:min(step, len(in))])
		if n == 0 {
			t.Fatalf("no room in the read buffer: rpos %d, rend %d", c.rpos, c.rend)
		}
		in = in[n:]
		c.rend += n
		err = c.processLocked()
	}
	if err != nil {
		var ce connError
		if !errors.As(err, &ce) {
			t.Fatalf("%T %v: not a connection error", err, err)
		}
	}
	inFlight := 0
	for _, s := range c.streams {
		if !s.finished {
			inFlight++
		}
		if s.sendWindow > h2wire.MaxWindow {
			t.Fatalf("stream %d: send window %d", s.id, s.sendWindow)
		}
		if s.unprocessed && (!c.goaway || s.id <= c.goawayLast) {
			t.Fatalf("stream %d unprocessed without a GOAWAY below it", s.id)
		}
	}
	if inFlight != c.active {
		t.Fatalf("%d streams in flight, %d counted", inFlight, c.active)
	}
	if c.sendWindow > h2wire.MaxWindow || c.rpos > c.rend || c.rend > len(c.rbuf) {
		t.Fatalf("window %d, rpos %d, rend %d", c.sendWindow, c.rpos, c.rend)
	}
	wholeFrames(t, c.wbuf)
	return c, err
}

// wholeFrames checks that what the client is to write is whole frames.
func wholeFrames(t *testing.T, b []byte) {
	t.Helper()
	for len(b) > 0 {
		if len(b) < h2wire.FrameHeaderLen {
			t.Fatalf("%d bytes to write that are not a frame", len(b))
		}
		n := h2wire.FrameHeaderLen + int(h2wire.ParseFrameHeader(b).Length)
		if n > len(b) {
			t.Fatalf("a frame of %d bytes in %d", n, len(b))
		}
		b = b[n:]
	}
}

// The seeds do what they say: the harness reaches the states the fuzzer
// starts from.
func TestFeedFrames(t *testing.T) {
	c, err := feedFrames(t, 7, seedOK())
	h := c.streams[0].h.(*checkHandler)
	if err != nil || !c.streams[0].finished || !h.headers || !h.trailer || h.data != 7 || c.streams[0].status != 200 {
		t.Errorf("a gRPC response on stream 1: %v, handler %+v", err, *h)
	}
	if c.active != 2 || c.encMax != 100 || c.peerMaxStreams != 100 {
		t.Errorf("%d in flight, table %d, max streams %d", c.active, c.encMax, c.peerMaxStreams)
	}
	c, err = feedFrames(t, 5, seedMixed())
	s1, s3, s5 := c.streams[0], c.streams[1], c.streams[2]
	if err != nil || !s3.finished || s3.status != 404 || s3.h.(*checkHandler).data != 1 || !s5.peerReset || s5.code != http2.ErrCodeCancel || s1.finished {
		t.Errorf("mixed frames: %v; stream 3 %s, stream 5 %s", err, state(s3), state(s5))
	}
	if n := bytes.Count(c.wbuf, []byte{0, 0, 8, byte(http2.FramePing), byte(http2.FlagPingAck)}); n != 1 {
		t.Errorf("%d PING acks written, want 1", n)
	}
	// RFC 9113 §8.1.1: DATA before HEADERS is a malformed response;
	// §6.9: a zero WINDOW_UPDATE on a stream a stream error; §6.8: the
	// streams above a GOAWAY's last stream were not processed.
	c, err = feedFrames(t, 1, seedGoAway())
	s1, s3, s5 = c.streams[0], c.streams[1], c.streams[2]
	if err != nil || !s1.malformed || !s3.malformed || s3.gotHeaders || !s5.unprocessed || !c.goaway || c.Usable() || c.active != 0 {
		t.Errorf("GOAWAY frames: %v; stream 1 %s, 3 %s, 5 %s", err, state(s1), state(s3), state(s5))
	}
	if n := bytes.Count(c.wbuf, []byte{0, 0, 4, byte(http2.FrameRSTStream)}); n != 2 {
		t.Errorf("%d RST_STREAMs written, want 2 (streams 1 and 3)", n)
	}
	if _, err := feedFrames(t, 0, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")); err == nil {
		t.Error("HTTP/1.1 taken for HTTP/2")
	}
}

// state says what a test wants to know of a stream.
func state(s *Stream) string {
	return fmt.Sprintf("{id %d finished %v headers %v status %d reset %v (%v) malformed %v unprocessed %v}",
		s.id, s.finished, s.gotHeaders, s.status, s.peerReset, s.code, s.malformed, s.unprocessed)
}

// FuzzFed is FuzzFrames for the connection an event loop drives: after
// the server's SETTINGS, three slots carry POSTs whose bodies wait for
// the windows, whatever the server sends is fed in reads of any size, and
// every slot whose request ends starts the next. It must not panic, and
// the books stay straight: a slot is in flight exactly while its stream
// is, each ended request is reported once, a connection that failed ends
// them all, and what is to be written is whole frames.
func FuzzFed(f *testing.F) {
	f.Add(uint8(7), seedOK())
	f.Add(uint8(5), seedMixed())
	f.Add(uint8(1), seedGoAway())
	f.Add(uint8(3), frame(nil, http2.FrameWindowUpdate, 0, 0, []byte{0, 1, 0, 0}))

	f.Fuzz(func(t *testing.T, cut uint8, in []byte) { feedFed(t, cut, in, false) })
}

// FuzzFedKeep is FuzzFed with the slots keeping their streams (Keep, as
// gRPC's ping-pong does): a request also ends when its slot's Handler
// has DATA, and the next goes on the same stream while it lives.
func FuzzFedKeep(f *testing.F) {
	f.Add(uint8(7), seedOK())
	f.Add(uint8(5), seedMixed())
	f.Add(uint8(1), seedGoAway())
	f.Fuzz(func(t *testing.T, cut uint8, in []byte) { feedFed(t, cut, in, true) })
}

// dataHandler is Ready once DATA came since its last Settle.
type dataHandler struct{ data int }

func (h *dataHandler) Field(int, []byte)      {}
func (h *dataHandler) Block(BlockKind, int32) {}
func (h *dataHandler) Data(p []byte)          { h.data += len(p) + 1 }
func (h *dataHandler) Ready() bool            { return h.data > 0 }
func (h *dataHandler) Settle(Result)          { h.data = 0 }

func feedFed(t *testing.T, cut uint8, in []byte, keep bool) *Fed {
	d := NewDialer(Config{Streams: 3, Fields: []h2wire.Field{{Name: ":method", Value: "POST"}}})
	hs := []*dataHandler{{}, {}, {}}
	fd := d.Fed(3, make([]byte, 100<<10), hs[0], hs[1], hs[2]) // more than the default windows
	if keep {
		fd.Keep()
	}
	fill := func(b []byte) []int32 {
		buf := fd.ReadBuf()
		if len(buf) < len(b) {
			t.Fatalf("no room in the read buffer for %d bytes", len(b))
		}
		return fd.Filled(copy(buf, b))
	}
	// What the socket takes: it must be whole frames (the preface first).
	drain := func() {
		wholeFrames(t, fd.Output())
		fd.Wrote(len(fd.Output()))
	}
	fd.Wrote(len(h2wire.ClientPreface))
	drain()
	if fill(seedSettings()); !fd.Ready() {
		t.Fatal("not Ready after the server's SETTINGS")
	}
	busy := make([]bool, 3)
	start := func() {
		for k := range busy {
			if busy[k] {
				continue
			}
			how, r := fd.Start(k)
			busy[k] = how == Started
			if how == Refused && !r.Done {
				t.Fatalf("slot %d refused, yet the connection takes more: %+v", k, r)
			}
		}
	}
	start()
	step := int(cut)%64 + 1
	for len(in) > 0 {
		n := min(step, len(in))
		done := fill(in[:n])
		in = in[n:]
		if c := fd.c; c.rbuf != nil && c.rpos == c.rend {
			t.Fatal("the Fed keeps a read buffer with no partial frame in it")
		}
		for _, k := range done {
			if !busy[k] {
				t.Fatalf("slot %d reported ended twice", k)
			}
			busy[k] = false
			replied := keep && hs[k].Ready()
			r := fd.Result(int(k))
			if r.End == Satisfied && !r.Finished && !replied {
				t.Fatalf("slot %d satisfied, not finished, no reply: %+v", k, r)
			}
		}
		if fd.Dead() {
			for k, b := range busy {
				if b {
					t.Fatalf("slot %d still in flight on a dead connection", k)
				}
			}
			break
		}
		start()
		drain()
	}
	c := fd.c
	live := 0
	for k, s := range fd.slots {
		if busy[k] != fd.busy[k] || (busy[k] && s.finished) {
			t.Fatalf("slot %d: in flight %v, the Fed says %v, stream finished %v", k, busy[k], fd.busy[k], s.finished)
		}
		if !s.finished && s.id != 0 {
			live++
		}
		if s.sendWindow > h2wire.MaxWindow {
			t.Fatalf("stream %d: send window %d", s.id, s.sendWindow)
		}
	}
	if !c.dead && live != c.active {
		t.Fatalf("%d streams in flight, %d counted", live, c.active)
	}
	drain()
	return fd
}

// The Fed's seeds do what they say: a gRPC-like response ends slot 0 and
// its next request starts (stream 7); the GOAWAY ends every slot's
// request, those above stream 3 unprocessed, and refuses new ones.
func TestFeedFed(t *testing.T) {
	fd := feedFed(t, 7, seedOK(), false)
	if s := fd.slots[0]; s.id != 7 || !fd.busy[0] {
		t.Errorf("slot 0 after its answer: stream %d, in flight %v; want the next request on stream 7", s.id, fd.busy[0])
	}
	if fd.c.rbuf != nil {
		t.Error("the Fed holds its read buffer while it waits: it must lend it back")
	}
	fd = feedFed(t, 1, seedGoAway(), false)
	if fd.Usable() || fd.c.active != 0 || !fd.slots[2].unprocessed {
		t.Errorf("after GOAWAY: usable %v, %d in flight, stream 5 %s", fd.Usable(), fd.c.active, state(fd.slots[2]))
	}
	if how, r := fd.Start(0); how != Refused || !r.Unsent {
		t.Errorf("a request after GOAWAY: %d %+v, want refused unsent", how, r)
	}
}
