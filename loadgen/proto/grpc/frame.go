package grpc

import "encoding/binary"

// HTTP/2 (RFC 9113) as this client speaks it: the frame types, flags,
// settings and error codes it uses, and helpers that append frames to a
// buffer.

const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

const frameHeaderLen = 9

// Frame types.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	framePriority     = 0x2
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9
)

// Frame flags.
const (
	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// Settings.
const (
	settingHeaderTableSize      = 0x1
	settingEnablePush           = 0x2
	settingMaxConcurrentStreams = 0x3
	settingInitialWindowSize    = 0x4
	settingMaxFrameSize         = 0x5
)

// Error codes.
const (
	errCodeNo          = 0x0
	errCodeProtocol    = 0x1
	errCodeInternal    = 0x2
	errCodeFlowControl = 0x3
	errCodeFrameSize   = 0x6
	errCodeRefused     = 0x7
	errCodeCancel      = 0x8
	errCodeCompression = 0x9
)

const (
	// defaultMaxFrame is the largest frame payload before SETTINGS say
	// otherwise, and the largest this client accepts (it never raises it).
	defaultMaxFrame = 16384
	// defaultWindow is HTTP/2's initial flow-control window.
	defaultWindow = 65535
	// recvWindow is the window this client gives every stream and the
	// connection: it reads and discards as fast as frames come, so the
	// peer never waits for a WINDOW_UPDATE of a message below 64 MiB.
	recvWindow = 1 << 30
	// maxStreamID is the last client stream ID: the connection is then
	// used up.
	maxStreamID = 1<<31 - 1
)

// appendFrameHeader appends a frame header for a payload of n bytes.
func appendFrameHeader(b []byte, n int, typ, flags byte, id uint32) []byte {
	return append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags,
		byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
}

func appendSetting(b []byte, id uint16, v uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, id)
	return binary.BigEndian.AppendUint32(b, v)
}

func appendWindowUpdate(b []byte, id, inc uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, id)
	return binary.BigEndian.AppendUint32(b, inc&0x7fffffff)
}

func appendRSTStream(b []byte, id, code uint32) []byte {
	b = appendFrameHeader(b, 4, frameRSTStream, 0, id)
	return binary.BigEndian.AppendUint32(b, code)
}

// appendHeaders appends a header block as a HEADERS frame and, when it is
// larger than a frame, CONTINUATION frames.
func appendHeaders(b []byte, id uint32, block []byte, endStream bool, maxFrame int) []byte {
	typ, flags := byte(frameHeaders), byte(0)
	if endStream {
		flags = flagEndStream
	}
	for {
		n := min(len(block), maxFrame)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		b = appendFrameHeader(b, n, typ, f, id)
		b = append(b, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return b
		}
		typ, flags = frameContinuation, 0
	}
}

// appendData appends data as DATA frames of at most maxFrame bytes; the
// last one carries END_STREAM when endStream is set. Empty data with
// endStream is one empty frame.
func appendData(b []byte, id uint32, data []byte, endStream bool, maxFrame int) []byte {
	for {
		n := min(len(data), maxFrame)
		var f byte
		if n == len(data) && endStream {
			f = flagEndStream
		}
		b = appendFrameHeader(b, n, frameData, f, id)
		b = append(b, data[:n]...)
		data = data[n:]
		if len(data) == 0 {
			return b
		}
	}
}
