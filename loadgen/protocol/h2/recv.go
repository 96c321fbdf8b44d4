package h2

import (
	"bytes"
	"errors"
	"fmt"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// The reader's half of a connection: frames are parsed in place from rbuf
// and dispatched to the streams, under mu.

// compact moves a partial frame to the front of rbuf when the space after it
// runs short.
func (c *conn) compact() {
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
		return
	}
	if c.rpos > 0 && len(c.rbuf)-c.rend < h2wire.FrameHeaderLen+h2wire.DefaultMaxFrame {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
}

// processLocked handles every complete frame in rbuf.
func (c *conn) processLocked() error {
	for c.rend-c.rpos >= h2wire.FrameHeaderLen {
		b := c.rbuf[c.rpos:c.rend]
		if !c.gotSettings && bytes.HasPrefix(b, []byte("HTTP/")) {
			return errNotHTTP2
		}
		fh := h2wire.ParseFrameHeader(b)
		if fh.Length > h2wire.DefaultMaxFrame {
			return connError{http2.ErrCodeFrameSize, fmt.Sprintf("%v frame of %d bytes", fh.Type, fh.Length)}
		}
		end := h2wire.FrameHeaderLen + int(fh.Length)
		if len(b) < end {
			break
		}
		c.rpos += end
		if err := c.frameLocked(fh, b[h2wire.FrameHeaderLen:end]); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns the unfinished stream with this ID, or nil. Frames for
// finished or reset streams are dropped; frames for streams we never
// opened are a protocol error.
func (c *conn) lookup(id uint32) (*stream, error) {
	if id&1 == 0 || id >= c.nextID {
		return nil, connError{http2.ErrCodeProtocol, fmt.Sprintf("frame for stream %d, which the client did not open", id)}
	}
	for _, s := range c.streams {
		if s.id == id && !s.finished {
			return s, nil
		}
	}
	return nil, nil
}

func (c *conn) frameLocked(fh h2wire.FrameHeader, p []byte) error {
	if c.hstream != 0 && fh.Type != http2.FrameContinuation {
		return connError{http2.ErrCodeProtocol, fmt.Sprintf("%v frame inside a header block", fh.Type)}
	}
	if !c.gotSettings && fh.Type != http2.FrameSettings {
		return connError{http2.ErrCodeProtocol, fmt.Sprintf("first frame is %v, not SETTINGS", fh.Type)}
	}
	wire := int64(h2wire.FrameHeaderLen) + int64(fh.Length)
	switch fh.Type {
	case http2.FrameData:
		if fh.StreamID == 0 {
			return connError{http2.ErrCodeProtocol, "DATA on stream 0"}
		}
		c.recvUnack += int64(len(p))
		if c.recvUnack >= ourWindow/2 {
			c.wbuf = h2wire.AppendWindowUpdate(c.wbuf, 0, uint32(c.recvUnack))
			c.recvUnack = 0
		}
		if _, err := unpad(fh, p); err != nil {
			return err
		}
		s, err := c.lookup(fh.StreamID)
		if s == nil {
			return err
		}
		if !s.gotHeaders {
			c.resetLocked(s, http2.ErrCodeProtocol, protocol.Protocol)
			return nil
		}
		s.bytes += wire
		if fh.Flags.Has(http2.FlagDataEndStream) {
			c.finishLocked(s)
			return nil
		}
		s.recvUnack += int64(len(p))
		if s.recvUnack >= ourWindow/2 {
			c.wbuf = h2wire.AppendWindowUpdate(c.wbuf, s.id, uint32(s.recvUnack))
			s.recvUnack = 0
		}

	case http2.FrameHeaders:
		if fh.StreamID == 0 {
			return connError{http2.ErrCodeProtocol, "HEADERS on stream 0"}
		}
		frag, err := unpad(fh, p)
		if err != nil {
			return err
		}
		if fh.Flags.Has(http2.FlagHeadersPriority) {
			if len(frag) < 5 {
				return connError{http2.ErrCodeFrameSize, "short HEADERS priority"}
			}
			frag = frag[5:]
		}
		end := fh.Flags.Has(http2.FlagHeadersEndStream)
		if fh.Flags.Has(http2.FlagHeadersEndHeaders) {
			return c.headersLocked(fh.StreamID, end, wire, frag)
		}
		c.hstream, c.hend, c.hbytes = fh.StreamID, end, wire
		c.hblock = append(c.hblock[:0], frag...)

	case http2.FrameContinuation:
		if c.hstream == 0 || fh.StreamID != c.hstream {
			return connError{http2.ErrCodeProtocol, "CONTINUATION without HEADERS"}
		}
		c.hblock = append(c.hblock, p...)
		c.hbytes += wire
		if len(c.hblock) > 1<<20 {
			return connError{http2.ErrCodeEnhanceYourCalm, "response header block over 1 MiB"}
		}
		if fh.Flags.Has(http2.FlagContinuationEndHeaders) {
			id := c.hstream
			c.hstream = 0
			return c.headersLocked(id, c.hend, c.hbytes, c.hblock)
		}

	case http2.FrameRSTStream:
		code, ok := h2wire.ParseRSTStream(p)
		if fh.StreamID == 0 || !ok {
			return connError{http2.ErrCodeProtocol, "malformed RST_STREAM"}
		}
		s, err := c.lookup(fh.StreamID)
		if s == nil {
			return err
		}
		class := protocol.Read
		if code == http2.ErrCodeProtocol {
			class = protocol.Protocol
		}
		s.errClass = class
		c.finishLocked(s)

	case http2.FrameSettings:
		return c.settingsLocked(fh, p)

	case http2.FramePing:
		if fh.StreamID != 0 || len(p) != 8 {
			return connError{http2.ErrCodeProtocol, "malformed PING"}
		}
		if !fh.Flags.Has(http2.FlagPingAck) {
			c.wbuf = h2wire.AppendPingAck(c.wbuf, p)
		}

	case http2.FrameGoAway:
		last, _, ok := h2wire.ParseGoAway(p)
		if fh.StreamID != 0 || !ok {
			return connError{http2.ErrCodeProtocol, "malformed GOAWAY"}
		}
		if !c.goaway || last < c.goawayLast {
			c.goawayLast = last
		}
		c.goaway = true
		c.broken.Store(true)
		for _, s := range c.streams {
			if s.id > last && !s.finished { // the server will not process it
				s.errClass, s.unprocessed = protocol.Read, true
				c.finishLocked(s)
			}
		}

	case http2.FrameWindowUpdate:
		u, ok := h2wire.ParseWindowUpdate(p)
		if !ok {
			return connError{http2.ErrCodeFrameSize, "malformed WINDOW_UPDATE"}
		}
		incr := int64(u)
		if fh.StreamID == 0 {
			if incr == 0 || c.sendWindow+incr > h2wire.MaxWindow {
				return connError{http2.ErrCodeFlowControl, "bad connection WINDOW_UPDATE"}
			}
			c.sendWindow += incr
			return nil
		}
		s, err := c.lookup(fh.StreamID)
		if s == nil {
			return err
		}
		if incr == 0 || s.sendWindow+incr > h2wire.MaxWindow {
			c.resetLocked(s, http2.ErrCodeFlowControl, protocol.Protocol)
			return nil
		}
		s.sendWindow += incr

	case http2.FramePushPromise:
		return connError{http2.ErrCodeProtocol, "PUSH_PROMISE although push is disabled"}
	}
	// PRIORITY, PRIORITY_UPDATE and unknown frame types are ignored.
	return nil
}

// headersLocked handles a complete header block.
func (c *conn) headersLocked(id uint32, endStream bool, wire int64, block []byte) error {
	status, err := decodeStatus(c.hdec, block) // always: the table must stay in step
	if err != nil && err != errBadStatus {
		return connError{http2.ErrCodeCompression, err.Error()}
	}
	s, lerr := c.lookup(id)
	if s == nil {
		return lerr
	}
	s.bytes += wire
	switch {
	case s.gotHeaders: // trailers
		if !endStream {
			c.resetLocked(s, http2.ErrCodeProtocol, protocol.Protocol)
			return nil
		}
	case err != nil || status == 0, status < 200 && endStream:
		c.resetLocked(s, http2.ErrCodeProtocol, protocol.Protocol)
		return nil
	case status < 200:
		return nil // informational (100, 103): the final response follows
	default:
		s.status, s.gotHeaders = status, true
	}
	if endStream {
		c.finishLocked(s)
	}
	return nil
}

// errBadStatus is a response whose :status is not a three-digit code: a
// stream error, the connection's HPACK state is sound.
var errBadStatus = errors.New("malformed :status")

// decodeStatus decodes a response header block and returns the :status it
// carries (0 if none). The table is updated even when the block's :status is
// malformed (errBadStatus, returned once the whole block is processed).
func decodeStatus(d *h2wire.Decoder, block []byte) (int32, error) {
	var status int32
	bad := false
	err := d.Decode(block, func(_ int, value []byte) { // :status, the only name d wants
		status = parseStatus(value)
		bad = bad || status == 0
	})
	switch {
	case err != nil:
		return 0, err
	case bad:
		return 0, errBadStatus
	}
	return status, nil
}

// parseStatus returns a three-digit status code, or 0.
func parseStatus(s []byte) int32 {
	if len(s) != 3 {
		return 0
	}
	var v int32
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + int32(c-'0')
	}
	if v < 100 {
		return 0
	}
	return v
}

func (c *conn) settingsLocked(fh h2wire.FrameHeader, p []byte) error {
	if fh.StreamID != 0 {
		return connError{http2.ErrCodeProtocol, "SETTINGS on a stream"}
	}
	if fh.Flags.Has(http2.FlagSettingsAck) {
		if len(p) != 0 {
			return connError{http2.ErrCodeFrameSize, "SETTINGS ack with a payload"}
		}
		return nil
	}
	if len(p)%6 != 0 {
		return connError{http2.ErrCodeFrameSize, "SETTINGS length not a multiple of 6"}
	}
	for ; len(p) > 0; p = p[6:] {
		id, v := http2.SettingID(uint16(p[0])<<8|uint16(p[1])), be32(p[2:])
		switch id {
		case http2.SettingHeaderTableSize:
			c.peerTableSizeLocked(v)
		case http2.SettingMaxConcurrentStreams:
			c.peerMaxStreams = int(min(v, 1<<30))
		case http2.SettingInitialWindowSize:
			if v > h2wire.MaxWindow {
				return connError{http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1"}
			}
			delta := int64(v) - c.peerWindow
			c.peerWindow = int64(v)
			for _, s := range c.streams {
				if s.id != 0 && !s.finished {
					s.sendWindow += delta
				}
			}
		case http2.SettingMaxFrameSize:
			if v < h2wire.DefaultMaxFrame || v > 1<<24-1 {
				return connError{http2.ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE out of range"}
			}
			c.peerMaxFrame = int(v)
		}
	}
	c.wbuf = h2wire.AppendSettingsAck(c.wbuf)
	c.gotSettings = true
	return nil
}

// peerTableSizeLocked applies the server's SETTINGS_HEADER_TABLE_SIZE to
// how requests are encoded: an update shrinking the table is announced at
// the start of the next header block, and requests whose entries no longer
// fit are sent as literals.
func (c *conn) peerTableSizeLocked(v uint32) {
	cur := min(c.peerTableSize, h2wire.DefaultTableSize)
	c.peerTableSize = v
	if v >= cur {
		return
	}
	c.hpPrefix = h2wire.AppendTableSizeUpdate(c.hpPrefix[:0], v)
	if c.d.blocks.Size > v {
		c.hp = hpLiteral
	}
}

// finishLocked marks a stream's response complete (or abandoned).
func (c *conn) finishLocked(s *stream) {
	if s.finished {
		return
	}
	s.finished = true
	c.active--
}

// resetLocked ends a stream with RST_STREAM and records why.
func (c *conn) resetLocked(s *stream, code http2.ErrCode, class protocol.ErrClass) {
	if s.finished {
		return
	}
	s.errClass = class
	c.wbuf = h2wire.AppendRSTStream(c.wbuf, s.id, code)
	c.finishLocked(s)
}

// unpad strips a PADDED frame's padding.
func unpad(fh h2wire.FrameHeader, p []byte) ([]byte, error) {
	if !fh.Flags.Has(http2.FlagDataPadded) { // same bit as FlagHeadersPadded
		return p, nil
	}
	if len(p) == 0 || int(p[0]) >= len(p) {
		return nil, connError{http2.ErrCodeProtocol, fmt.Sprintf("bad padding in %v", fh.Type)}
	}
	return p[1 : len(p)-int(p[0])], nil
}

func be32(p []byte) uint32 {
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

// readErrClass classifies an error that broke the connection while reading.
func readErrClass(err error) protocol.ErrClass {
	var ce connError
	if errors.As(err, &ce) || errors.Is(err, errNotHTTP2) {
		return protocol.Protocol
	}
	return protocol.Read
}
