package http2

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// HTTP/2 framing (RFC 9113 §4): a 9-byte header, then the payload. Frames are
// appended to the connection's write buffer and parsed in place from its read
// buffer, so neither direction allocates. The type, flag, setting and error
// code names are x/net/http2's.

const (
	frameHeaderLen  = 9
	clientPreface   = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	maxStreamID     = 1<<31 - 1
	maxWindow       = 1<<31 - 1
	defaultWindow   = 65535
	defaultMaxFrame = 16384 // SETTINGS_MAX_FRAME_SIZE's initial value; also what we accept

	// ourWindow is the receive window we give the server per stream and for
	// the connection: 2^30-1, h2load's default (-w 30, -W 30).
	ourWindow = 1<<30 - 1
)

type frameHeader struct {
	length   uint32
	typ      http2.FrameType
	flags    http2.Flags
	streamID uint32
}

func parseFrameHeader(b []byte) frameHeader {
	return frameHeader{
		length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		typ:      http2.FrameType(b[3]),
		flags:    http2.Flags(b[4]),
		streamID: binary.BigEndian.Uint32(b[5:]) & maxStreamID,
	}
}

func appendFrameHeader(dst []byte, length int, typ http2.FrameType, flags http2.Flags, streamID uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), byte(typ), byte(flags),
		byte(streamID>>24), byte(streamID>>16), byte(streamID>>8), byte(streamID))
}

func appendUint32(dst []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, v)
}

// appendSettings writes a SETTINGS frame with (id, value) pairs.
func appendSettings(dst []byte, kv ...uint32) []byte {
	dst = appendFrameHeader(dst, len(kv)/2*6, http2.FrameSettings, 0, 0)
	for i := 0; i+1 < len(kv); i += 2 {
		dst = append(dst, byte(kv[i]>>8), byte(kv[i]))
		dst = appendUint32(dst, kv[i+1])
	}
	return dst
}

func appendSettingsAck(dst []byte) []byte {
	return appendFrameHeader(dst, 0, http2.FrameSettings, http2.FlagSettingsAck, 0)
}

func appendWindowUpdate(dst []byte, streamID, incr uint32) []byte {
	dst = appendFrameHeader(dst, 4, http2.FrameWindowUpdate, 0, streamID)
	return appendUint32(dst, incr)
}

func appendRSTStream(dst []byte, streamID uint32, code http2.ErrCode) []byte {
	dst = appendFrameHeader(dst, 4, http2.FrameRSTStream, 0, streamID)
	return appendUint32(dst, uint32(code))
}

func appendPingAck(dst []byte, data []byte) []byte {
	dst = appendFrameHeader(dst, 8, http2.FramePing, http2.FlagPingAck, 0)
	return append(dst, data[:8]...)
}

func appendGoAway(dst []byte, lastStreamID uint32, code http2.ErrCode) []byte {
	dst = appendFrameHeader(dst, 8, http2.FrameGoAway, 0, 0)
	dst = appendUint32(dst, lastStreamID)
	return appendUint32(dst, uint32(code))
}

// appendHeaders writes a header block as HEADERS plus CONTINUATION frames of
// at most maxFrame bytes each and returns the bytes written.
func appendHeaders(dst []byte, streamID uint32, endStream bool, maxFrame int, prefix, block []byte) ([]byte, int) {
	start := len(dst)
	total := len(prefix) + len(block)
	typ := http2.FrameHeaders
	flags := http2.Flags(0)
	if endStream {
		flags |= http2.FlagHeadersEndStream
	}
	for {
		n := min(total, maxFrame)
		f := flags
		if n == total {
			f |= http2.FlagHeadersEndHeaders // same bit as FlagContinuationEndHeaders
		}
		dst = appendFrameHeader(dst, n, typ, f, streamID)
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
			return dst, len(dst) - start
		}
		typ, flags = http2.FrameContinuation, 0
	}
}

func appendData(dst []byte, streamID uint32, endStream bool, data []byte) []byte {
	flags := http2.Flags(0)
	if endStream {
		flags = http2.FlagDataEndStream
	}
	dst = appendFrameHeader(dst, len(data), http2.FrameData, flags, streamID)
	return append(dst, data...)
}
