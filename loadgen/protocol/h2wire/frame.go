package h2wire

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// HTTP/2 framing (RFC 9113 §4): a 9-byte header, then the payload.

// FrameHeader is a parsed frame header.
type FrameHeader struct {
	Length   uint32
	Type     http2.FrameType
	Flags    http2.Flags
	StreamID uint32 // the reserved bit cleared
}

// ParseFrameHeader parses the frame header at the start of b, which holds
// at least FrameHeaderLen bytes.
func ParseFrameHeader(b []byte) FrameHeader {
	_ = b[FrameHeaderLen-1]
	return FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     http2.FrameType(b[3]),
		Flags:    http2.Flags(b[4]),
		StreamID: binary.BigEndian.Uint32(b[5:]) & MaxStreamID,
	}
}

// AppendFrameHeader appends the header of a frame with a payload of length
// bytes.
func AppendFrameHeader(dst []byte, length int, typ http2.FrameType, flags http2.Flags, streamID uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), byte(typ), byte(flags),
		byte(streamID>>24)&0x7f, byte(streamID>>16), byte(streamID>>8), byte(streamID))
}

// AppendPreface appends what a client sends first on a connection: the
// preface, its SETTINGS (server push disabled, the initial stream window
// set to window) and a WINDOW_UPDATE that raises the connection's window to
// window too. window is at least DefaultWindow.
func AppendPreface(dst []byte, window uint32) []byte {
	dst = append(dst, ClientPreface...)
	dst = AppendSettings(dst,
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: window},
	)
	if window > DefaultWindow {
		dst = AppendWindowUpdate(dst, 0, window-DefaultWindow)
	}
	return dst
}

// AppendSettings appends a SETTINGS frame.
func AppendSettings(dst []byte, settings ...http2.Setting) []byte {
	dst = AppendFrameHeader(dst, 6*len(settings), http2.FrameSettings, 0, 0)
	for _, s := range settings {
		dst = binary.BigEndian.AppendUint16(dst, uint16(s.ID))
		dst = binary.BigEndian.AppendUint32(dst, s.Val)
	}
	return dst
}

// AppendSettingsAck appends the acknowledgement of the peer's SETTINGS.
func AppendSettingsAck(dst []byte) []byte {
	return AppendFrameHeader(dst, 0, http2.FrameSettings, http2.FlagSettingsAck, 0)
}

// AppendWindowUpdate appends a WINDOW_UPDATE; stream 0 is the connection.
func AppendWindowUpdate(dst []byte, streamID, incr uint32) []byte {
	dst = AppendFrameHeader(dst, 4, http2.FrameWindowUpdate, 0, streamID)
	return binary.BigEndian.AppendUint32(dst, incr&MaxWindow)
}

// AppendRSTStream appends an RST_STREAM.
func AppendRSTStream(dst []byte, streamID uint32, code http2.ErrCode) []byte {
	dst = AppendFrameHeader(dst, 4, http2.FrameRSTStream, 0, streamID)
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

// AppendPingAck appends the acknowledgement of a PING whose payload is
// data (8 bytes).
func AppendPingAck(dst, data []byte) []byte {
	dst = AppendFrameHeader(dst, 8, http2.FramePing, http2.FlagPingAck, 0)
	return append(dst, data[:8]...)
}

// AppendGoAway appends a GOAWAY without debug data.
func AppendGoAway(dst []byte, lastStreamID uint32, code http2.ErrCode) []byte {
	dst = AppendFrameHeader(dst, 8, http2.FrameGoAway, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, lastStreamID&MaxStreamID)
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

// AppendHeaders appends the header block prefix+block (prefix may be
// empty: it saves the caller a copy) as a HEADERS frame and, past maxFrame
// bytes, CONTINUATION frames.
func AppendHeaders(dst []byte, streamID uint32, endStream bool, maxFrame int, prefix, block []byte) []byte {
	total := len(prefix) + len(block)
	typ, flags := http2.FrameHeaders, http2.Flags(0)
	if endStream {
		flags = http2.FlagHeadersEndStream
	}
	for {
		n := min(total, maxFrame)
		f := flags
		if n == total {
			f |= http2.FlagHeadersEndHeaders // the same bit as FlagContinuationEndHeaders
		}
		dst = AppendFrameHeader(dst, n, typ, f, streamID)
		for k := n; k > 0; {
			if len(prefix) > 0 {
				c := min(k, len(prefix))
				dst, prefix, k = append(dst, prefix[:c]...), prefix[c:], k-c
				continue
			}
			dst, block, k = append(dst, block[:k]...), block[k:], 0
		}
		total -= n
		if total == 0 {
			return dst
		}
		typ, flags = http2.FrameContinuation, 0
	}
}

// AppendData appends data as DATA frames of at most maxFrame bytes; the
// last carries END_STREAM when endStream is set. Empty data is one empty
// frame.
func AppendData(dst []byte, streamID uint32, endStream bool, maxFrame int, data []byte) []byte {
	for {
		n := min(len(data), maxFrame)
		var f http2.Flags
		if n == len(data) && endStream {
			f = http2.FlagDataEndStream
		}
		dst = AppendFrameHeader(dst, n, http2.FrameData, f, streamID)
		dst = append(dst, data[:n]...)
		data = data[n:]
		if len(data) == 0 {
			return dst
		}
	}
}

// ParseWindowUpdate returns a WINDOW_UPDATE's increment; ok is false when
// the payload is not 4 bytes.
func ParseWindowUpdate(p []byte) (incr uint32, ok bool) {
	if len(p) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(p) & MaxWindow, true
}

// ParseRSTStream returns an RST_STREAM's error code; ok is false when the
// payload is not 4 bytes.
func ParseRSTStream(p []byte) (code http2.ErrCode, ok bool) {
	if len(p) != 4 {
		return 0, false
	}
	return http2.ErrCode(binary.BigEndian.Uint32(p)), true
}

// ParseGoAway returns a GOAWAY's last stream ID and error code; ok is false
// when the payload is shorter than 8 bytes. Debug data is ignored.
func ParseGoAway(p []byte) (lastStreamID uint32, code http2.ErrCode, ok bool) {
	if len(p) < 8 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(p) & MaxStreamID, http2.ErrCode(binary.BigEndian.Uint32(p[4:])), true
}
