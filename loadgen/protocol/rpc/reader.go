package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol/h2wire"
)

// protocolError is the peer breaking HTTP/2: the connection is dropped.
type protocolError string

func (e protocolError) Error() string { return "HTTP/2 protocol error from the target: " + string(e) }

// readLoop reads frames until the connection fails or closes.
func (t *transport) readLoop() {
	err := t.readFrames()
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s closed the connection", t.d.s.Target)
	} else if _, ok := err.(protocolError); !ok {
		err = fmt.Errorf("reading from %s: %w", t.d.s.Target, err)
	}
	t.fail(err)
}

func (t *transport) readFrames() error {
	for {
		if t.ctlQueued.Load() && t.br.Buffered() == 0 {
			// Acks and window updates are queued while frames are read.
			// Before waiting for more, give the callers just woken a
			// chance to carry them with their next request; then write
			// what is left.
			runtime.Gosched()
			t.flushControl()
		}
		h, err := t.br.Peek(h2wire.FrameHeaderLen)
		if err != nil {
			return err
		}
		fh := h2wire.ParseFrameHeader(h)
		n, typ, flags, id := int(fh.Length), fh.Type, fh.Flags, fh.StreamID
		t.br.Discard(h2wire.FrameHeaderLen)
		if n > h2wire.DefaultMaxFrame {
			return protocolError(fmt.Sprintf("frame of %d bytes, above the %d allowed", n, h2wire.DefaultMaxFrame))
		}
		if t.hstream != 0 && typ != http2.FrameContinuation {
			return protocolError("header block interrupted")
		}
		switch typ {
		case http2.FrameData:
			err = t.onData(id, flags, n)
		case http2.FrameHeaders, http2.FrameContinuation:
			err = t.onHeaders(typ, id, flags, n)
		default:
			var p []byte
			if p, err = t.br.Peek(n); err != nil {
				return err
			}
			err = t.onControl(typ, id, flags, p)
			t.br.Discard(n)
		}
		if err != nil {
			return err
		}
	}
}

func (t *transport) onData(id uint32, flags http2.Flags, n int) error {
	if id == 0 {
		return protocolError("DATA on stream 0")
	}
	// The connection window counts the whole frame, padding included.
	t.recvUnacked += n
	if t.recvUnacked >= recvWindow/2 {
		inc := uint32(t.recvUnacked)
		t.recvUnacked = 0
		var f [h2wire.FrameHeaderLen + 4]byte
		t.queue(h2wire.AppendWindowUpdate(f[:0], 0, inc))
	}
	total, pad := n, 0
	if flags.Has(http2.FlagDataPadded) {
		if n == 0 {
			return protocolError("padded DATA without a pad length")
		}
		p, err := t.br.Peek(1)
		if err != nil {
			return err
		}
		pad = int(p[0])
		t.br.Discard(1)
		n--
		if pad > n {
			return protocolError("DATA padding longer than the frame")
		}
	}
	data := n - pad

	t.mu.Lock()
	st := t.streams[id]
	parse := st != nil && st.headers && st.httpStatus == 200 && st.grpc
	if st != nil && !parse {
		st.bytes += int64(data)
	}
	t.mu.Unlock()

	for data > 0 {
		p, err := t.br.Peek(min(data, t.br.Size()))
		if err != nil && len(p) == 0 {
			return err
		}
		if parse {
			for q := p; len(q) > 0; {
				k, complete := st.mr.feed(q)
				q = q[k:]
				if complete {
					t.message(st, id)
				}
			}
		}
		t.br.Discard(len(p))
		data -= len(p)
	}
	if _, err := t.br.Discard(pad); err != nil {
		return err
	}
	if st == nil {
		return nil // a stream the client gave up: its bytes are only counted
	}
	if flags.Has(http2.FlagDataEndStream) {
		t.mu.Lock()
		if st.open && st.id == id {
			t.endStream(st) // without trailers, so without a gRPC status
		}
		t.mu.Unlock()
		return nil
	}
	st.recvUnacked += total
	if st.recvUnacked >= recvWindow/2 { // a long ping-pong stream
		inc := uint32(st.recvUnacked)
		st.recvUnacked = 0
		var f [h2wire.FrameHeaderLen + 4]byte
		t.queue(h2wire.AppendWindowUpdate(f[:0], id, inc))
	}
	return nil
}

// message hands a complete message to its stream.
func (t *transport) message(st *stream, id uint32) {
	m := &st.mr
	v := replyBad
	if !m.bad {
		v = st.check.check(m.head[:m.nh], m.size)
	}
	t.mu.Lock()
	if st.open && st.id == id {
		st.msgs++
		st.bytes += int64(prefixLen + m.size)
		st.verdict = max(st.verdict, v)
		st.signal()
	}
	t.mu.Unlock()
}

// onHeaders reads a HEADERS or CONTINUATION frame and, once the header
// block is whole, decodes it: response headers, or trailers.
func (t *transport) onHeaders(typ http2.FrameType, id uint32, flags http2.Flags, n int) error {
	p, err := t.br.Peek(n)
	if err != nil {
		return err
	}
	defer t.br.Discard(n)
	if id == 0 {
		return protocolError("HEADERS on stream 0")
	}
	if typ == http2.FrameContinuation {
		if t.hstream != id {
			return protocolError("CONTINUATION without HEADERS")
		}
	} else {
		if flags.Has(http2.FlagHeadersPadded) {
			if len(p) == 0 || int(p[0]) > len(p)-1 {
				return protocolError("bad HEADERS padding")
			}
			p = p[1 : len(p)-int(p[0])]
		}
		if flags.Has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				return protocolError("short HEADERS priority")
			}
			p = p[5:]
		}
		t.hblock = t.hblock[:0]
		t.hend = flags.Has(http2.FlagHeadersEndStream)
	}
	if !flags.Has(http2.FlagHeadersEndHeaders) { // the same bit as FlagContinuationEndHeaders
		if len(t.hblock)+len(p) > 1<<20 {
			return protocolError("header block above 1 MiB")
		}
		t.hblock = append(t.hblock, p...)
		t.hstream = id
		return nil
	}
	block := p
	if t.hstream != 0 {
		t.hblock = append(t.hblock, p...)
		block = t.hblock
		t.hstream = 0
	}
	t.fields.reset()
	if err := t.dec.Decode(block, t.fields.add); err != nil {
		return protocolError(err.Error())
	}
	f := &t.fields
	if f.httpStatus >= 100 && f.httpStatus < 200 {
		return nil // informational: the real headers follow
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.streams[id]
	if st == nil {
		return nil
	}
	if !st.headers {
		st.headers = true
		st.httpStatus = f.httpStatus
		st.grpc = f.grpc
		if t.hend { // trailers-only: the status is in these headers
			st.grpcStatus = f.grpcStatus
			t.endStream(st)
		}
		return nil
	}
	if !t.hend {
		return protocolError("trailers without END_STREAM")
	}
	st.grpcStatus = f.grpcStatus // trailers
	t.endStream(st)
	return nil
}

// onControl handles the frames that carry no stream data.
func (t *transport) onControl(typ http2.FrameType, id uint32, flags http2.Flags, p []byte) error {
	var f [h2wire.FrameHeaderLen + 8]byte // a control frame to queue
	switch typ {
	case http2.FrameSettings:
		if id != 0 {
			return protocolError("SETTINGS on a stream")
		}
		if flags.Has(http2.FlagSettingsAck) {
			return nil
		}
		if err := t.applySettings(p); err != nil {
			return err
		}
		t.queue(h2wire.AppendSettingsAck(f[:0]))
	case http2.FramePing:
		if len(p) != 8 || id != 0 {
			return protocolError("bad PING")
		}
		if !flags.Has(http2.FlagPingAck) {
			t.queue(h2wire.AppendPingAck(f[:0], p))
		}
	case http2.FrameGoAway:
		last, _, ok := h2wire.ParseGoAway(p)
		if !ok || id != 0 {
			return protocolError("bad GOAWAY")
		}
		t.mu.Lock()
		t.draining = true
		for sid, st := range t.streams {
			if sid > last {
				st.refused = true
				t.endStream(st)
			}
		}
		t.wakeAll()
		t.mu.Unlock()
	case http2.FrameWindowUpdate:
		u, ok := h2wire.ParseWindowUpdate(p)
		if !ok {
			return protocolError("bad WINDOW_UPDATE")
		}
		inc := int64(u)
		t.mu.Lock()
		defer t.mu.Unlock()
		if id == 0 {
			if inc == 0 || t.sendWin+inc > h2wire.MaxWindow {
				return protocolError("bad connection WINDOW_UPDATE")
			}
			t.sendWin += inc
		} else if st := t.streams[id]; st != nil {
			st.sendWin += inc
		}
		t.wakeAll()
	case http2.FrameRSTStream:
		code, ok := h2wire.ParseRSTStream(p)
		if !ok || id == 0 {
			return protocolError("bad RST_STREAM")
		}
		t.mu.Lock()
		if st := t.streams[id]; st != nil {
			st.rst, st.rstCode = true, code
			t.endStream(st)
		}
		t.mu.Unlock()
	case http2.FramePushPromise:
		return protocolError("PUSH_PROMISE, which the client disabled")
	}
	return nil // PRIORITY and unknown frames are ignored
}

// applySettings applies the peer's SETTINGS.
func (t *transport) applySettings(p []byte) error {
	if len(p)%6 != 0 {
		return protocolError("SETTINGS length not a multiple of 6")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for ; len(p) > 0; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:])
		switch http2.SettingID(binary.BigEndian.Uint16(p)) {
		case http2.SettingHeaderTableSize:
			if v < t.tableUsed {
				t.draining = true // the header blocks refer to entries the peer drops
			}
		case http2.SettingMaxConcurrentStreams:
			t.maxStreams = v
		case http2.SettingInitialWindowSize:
			if v > h2wire.MaxWindow {
				return protocolError("initial window above 2^31-1")
			}
			delta := int64(v) - t.initWin
			t.initWin = int64(v)
			for _, st := range t.streams {
				st.sendWin += delta
			}
		case http2.SettingMaxFrameSize:
			if v < h2wire.DefaultMaxFrame || v > 1<<24-1 {
				return protocolError("bad SETTINGS_MAX_FRAME_SIZE")
			}
			t.maxFrame = int(v)
		}
	}
	t.wakeAll()
	return nil
}
