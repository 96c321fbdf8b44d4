package h2conn

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// The reader's half of a connection: frames are parsed in place from rbuf
// and dispatched to the streams, under mu. It does no I/O: fed bytes, it
// changes state and appends what it must answer (acks, window updates,
// resets) to wbuf.

// compact moves a partial frame to the front of rbuf when the space after it
// runs short.
func (c *Conn) compact() {
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
		return
	}
	if c.rpos > 0 && len(c.rbuf)-c.rend < h2wire.FrameHeaderLen+h2wire.DefaultMaxFrame {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
}

// processLocked handles every complete frame in rbuf. An error is a
// connection error: the connection must be dropped.
func (c *Conn) processLocked() error {
	for c.rend-c.rpos >= h2wire.FrameHeaderLen {
		b := c.rbuf[c.rpos:c.rend]
		fh := h2wire.ParseFrameHeader(b)
		// The client never raises SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2).
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
// streams that ended or that the client reset are dropped (RFC 9113 §5.1,
// "closed"); a frame for a stream the client never opened, one still
// "idle", is a connection error (§5.1, "idle"; §5.1.1).
func (c *Conn) lookup(fh h2wire.FrameHeader) (*Stream, error) {
	id := fh.StreamID
	if id&1 == 0 || id >= c.nextID {
		return nil, connError{http2.ErrCodeProtocol, fmt.Sprintf("%v frame for stream %d, which the client did not open", fh.Type, id)}
	}
	for _, s := range c.streams {
		if s.id == id && !s.finished {
			return s, nil
		}
	}
	return nil, nil
}

func (c *Conn) frameLocked(fh h2wire.FrameHeader, p []byte) error {
	// A header block is contiguous: nothing else, of any stream, comes
	// between its HEADERS and its last CONTINUATION (§6.10).
	if c.hstream != 0 && fh.Type != http2.FrameContinuation {
		return connError{http2.ErrCodeProtocol, fmt.Sprintf("%v frame inside a header block", fh.Type)}
	}
	// The server's preface is a SETTINGS frame (§3.4).
	if !c.gotSettings && fh.Type != http2.FrameSettings {
		return connError{http2.ErrCodeProtocol, fmt.Sprintf("first frame is %v, not SETTINGS", fh.Type)}
	}
	wire := int64(h2wire.FrameHeaderLen) + int64(fh.Length)
	switch fh.Type {
	case http2.FrameData:
		return c.dataLocked(fh, p, wire)

	case http2.FrameHeaders:
		if fh.StreamID == 0 { // §6.2
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
			return c.headersLocked(fh, end, wire, frag)
		}
		c.hstream, c.hend, c.hbytes = fh.StreamID, end, wire
		c.hblock = append(c.hblock[:0], frag...)

	case http2.FrameContinuation:
		if c.hstream == 0 || fh.StreamID != c.hstream { // §6.10
			return connError{http2.ErrCodeProtocol, "CONTINUATION without HEADERS"}
		}
		c.hblock = append(c.hblock, p...)
		c.hbytes += wire
		if len(c.hblock) > 1<<20 {
			return connError{http2.ErrCodeEnhanceYourCalm, "response header block over 1 MiB"}
		}
		if fh.Flags.Has(http2.FlagContinuationEndHeaders) {
			fh.StreamID, c.hstream = c.hstream, 0
			return c.headersLocked(fh, c.hend, c.hbytes, c.hblock)
		}

	case http2.FrameRSTStream:
		// §6.4: on stream 0 a PROTOCOL_ERROR, of another length than 4 a
		// FRAME_SIZE_ERROR, for an idle stream a PROTOCOL_ERROR.
		if fh.StreamID == 0 {
			return connError{http2.ErrCodeProtocol, "RST_STREAM on stream 0"}
		}
		code, ok := h2wire.ParseRSTStream(p)
		if !ok {
			return connError{http2.ErrCodeFrameSize, "RST_STREAM not 4 bytes"}
		}
		s, err := c.lookup(fh)
		if s == nil {
			return err
		}
		s.peerReset, s.code = true, code
		c.finishLocked(s)

	case http2.FrameSettings:
		return c.settingsLocked(fh, p)

	case http2.FramePing: // §6.7
		if fh.StreamID != 0 {
			return connError{http2.ErrCodeProtocol, "PING on a stream"}
		}
		if len(p) != 8 {
			return connError{http2.ErrCodeFrameSize, "PING not 8 bytes"}
		}
		if !fh.Flags.Has(http2.FlagPingAck) {
			c.wbuf = h2wire.AppendPingAck(c.wbuf, p)
		}

	case http2.FrameGoAway:
		return c.goAwayLocked(fh, p)

	case http2.FrameWindowUpdate:
		return c.windowUpdateLocked(fh, p)

	case http2.FramePushPromise:
		// The client's SETTINGS disabled push (§6.6, §8.4).
		return connError{http2.ErrCodeProtocol, "PUSH_PROMISE although push is disabled"}
	}
	// PRIORITY (deprecated, §5.3.2) and unknown frame types (§5.5) are
	// ignored.
	return nil
}

func (c *Conn) dataLocked(fh h2wire.FrameHeader, p []byte, wire int64) error {
	if fh.StreamID == 0 { // §6.1
		return connError{http2.ErrCodeProtocol, "DATA on stream 0"}
	}
	// The whole payload counts against the windows, padding included
	// (§6.1); the client returns it at once, as it reads.
	c.recvUnack += int64(len(p))
	if c.recvUnack >= OurWindow/2 {
		c.wbuf = h2wire.AppendWindowUpdate(c.wbuf, 0, uint32(c.recvUnack))
		c.recvUnack = 0
	}
	data, err := unpad(fh, p)
	if err != nil {
		return err
	}
	s, err := c.lookup(fh)
	if s == nil {
		return err
	}
	if !s.gotHeaders {
		// DATA before the response's HEADERS: a message is HEADERS,
		// then DATA (§8.1); out of sequence it is malformed, a stream
		// error of type PROTOCOL_ERROR (§8.1.1). The connection is
		// sound.
		c.malformedLocked(s)
		return nil
	}
	s.read += wire
	if s.h != nil {
		s.h.Data(data)
	}
	if fh.Flags.Has(http2.FlagDataEndStream) {
		c.finishLocked(s)
		return nil
	}
	s.recvUnack += int64(len(p))
	if s.recvUnack >= OurWindow/2 { // a long stream (ping-pong, a large body)
		c.wbuf = h2wire.AppendWindowUpdate(c.wbuf, s.id, uint32(s.recvUnack))
		s.recvUnack = 0
	}
	return nil
}

// errBadStatus is a header block whose :status is not one three-digit
// code: the response is malformed (a stream error), the connection's
// HPACK state is sound.
var errBadStatus = errors.New("malformed :status")

// decodeLocked decodes a complete header block, for s (nil: only to keep
// the HPACK table in step) and returns its :status (0 if none). s's
// Handler gets the fields it wants. The table is updated even when the
// block's :status is malformed (errBadStatus, returned once the whole
// block is processed); another error is the peer breaking HPACK.
func (c *Conn) decodeLocked(s *Stream, block []byte) (int32, error) {
	c.hs, c.hstatus, c.hbad = s, 0, false
	err := c.hdec.Decode(block, c.field) // always: the table must stay in step
	c.hs = nil
	switch {
	case err != nil:
		return 0, err
	case c.hbad:
		return 0, errBadStatus
	}
	return c.hstatus, nil
}

// onField takes a decoded field: :status, or one for the stream's Handler.
func (c *Conn) onField(name int, value []byte) {
	if name == 0 {
		// One :status, a three-digit code (RFC 9113 §8.3.2, RFC 9110 §15).
		st := parseStatus(value)
		c.hbad = c.hbad || st == 0 || c.hstatus != 0
		c.hstatus = st
		return
	}
	if s := c.hs; s != nil && s.h != nil {
		s.h.Field(name-1, value)
	}
}

// headersLocked handles a complete header block.
func (c *Conn) headersLocked(fh h2wire.FrameHeader, endStream bool, wire int64, block []byte) error {
	s, lerr := c.lookup(fh)
	if lerr != nil {
		return lerr
	}
	status, err := c.decodeLocked(s, block)
	if err != nil && err != errBadStatus {
		// §4.3: a field block that does not decode is a connection
		// error of type COMPRESSION_ERROR.
		return connError{http2.ErrCodeCompression, err.Error()}
	}
	if s == nil {
		return nil
	}
	s.read += wire
	switch {
	case s.gotHeaders: // trailers
		// §8.1: a HEADERS frame after the final response headers must
		// end the stream; otherwise the response is malformed.
		if !endStream {
			c.malformedLocked(s)
			return nil
		}
		s.block(BlockTrailers)
	case err != nil || status == 0, // §8.3.2: every response has one :status
		status == 101,             // §8.6: no 101 (Switching Protocols) in HTTP/2
		status < 200 && endStream: // §8.1: an interim response does not end the stream
		c.malformedLocked(s)
		return nil
	case status < 200:
		s.block(BlockDropped) // informational (100, 103): the final response follows
		return nil
	default:
		s.status, s.gotHeaders = status, true
		s.block(BlockHeaders)
	}
	if endStream {
		c.finishLocked(s)
	}
	return nil
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

// finishLocked marks a stream's response complete (or abandoned).
func (c *Conn) finishLocked(s *Stream) {
	if s.finished {
		return
	}
	s.finished = true
	c.active--
}

// resetLocked ends a stream with RST_STREAM (§5.4.2).
func (c *Conn) resetLocked(s *Stream, code http2.ErrCode) {
	if s.finished {
		return
	}
	c.wbuf = h2wire.AppendRSTStream(c.wbuf, s.id, code)
	c.finishLocked(s)
}

// malformedLocked resets a stream whose response is malformed: a stream
// error of type PROTOCOL_ERROR (§8.1.1).
func (c *Conn) malformedLocked(s *Stream) {
	s.block(BlockDropped)
	s.malformed = true
	c.resetLocked(s, http2.ErrCodeProtocol)
}

// unpad strips a PADDED frame's padding: padding as long as the payload
// or longer is a connection error (§6.1, §6.2).
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
	if errors.As(err, &ce) {
		return protocol.Protocol
	}
	return protocol.Read
}
