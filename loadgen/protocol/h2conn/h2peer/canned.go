package h2peer

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol/h2wire"
)

// Canned is a minimal HTTP/2 server that answers every request with the
// same 200 response and a body of n bytes, allocating nothing per
// request, so that allocation counts and CPU profiles show the client. It
// does not decode requests. With cfg it serves h2 over TLS. It returns the
// address.
func Canned(t testing.TB, n int, cfg *tls.Config) string {
	resp := h2wire.AppendFrameHeader(nil, 1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 0)
	resp = append(resp, 0x88) // :status 200
	resp = h2wire.AppendFrameHeader(resp, n, http2.FrameData, http2.FlagDataEndStream, 0)
	resp = append(resp, make([]byte, n)...)
	return CannedFrames(t, resp, cfg)
}

// CannedGRPC is Canned for gRPC: every call gets the reply of a health
// check that says SERVING, and grpc-status 0 in its trailers.
func CannedGRPC(t testing.TB) string {
	hb := []byte{0x88, 0x0f, 0x10, 16} // :status 200; content-type, literal, not indexed, 16 bytes
	hb = append(hb, "application/grpc"...)
	resp := h2wire.AppendFrameHeader(nil, len(hb), http2.FrameHeaders, http2.FlagHeadersEndHeaders, 0)
	resp = append(resp, hb...)
	msg := []byte{0, 0, 0, 0, 2, 0x08, 0x01} // HealthCheckResponse{status: SERVING}
	resp = h2wire.AppendFrameHeader(resp, len(msg), http2.FrameData, 0, 0)
	resp = append(resp, msg...)
	tb := append([]byte{0x00, 11}, "grpc-status"...)
	tb = append(tb, 1, '0')
	resp = h2wire.AppendFrameHeader(resp, len(tb), http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 0)
	resp = append(resp, tb...)
	return CannedFrames(t, resp, nil)
}

// CannedFrames is a server that answers every request with the frames of
// resp (written for stream 0: each frame gets the request's stream ID).
func CannedFrames(t testing.TB, resp []byte, cfg *tls.Config) string {
	var ids []int // where each frame's stream ID is
	for at := 0; at < len(resp); at += h2wire.FrameHeaderLen + int(h2wire.ParseFrameHeader(resp[at:]).Length) {
		ids = append(ids, at+5)
	}
	return serveCanned(t, cfg, func(out []byte, fh h2wire.FrameHeader) []byte {
		if fh.Type == http2.FrameHeaders && fh.Flags.Has(http2.FlagHeadersEndStream) ||
			fh.Type == http2.FrameData && fh.Flags.Has(http2.FlagDataEndStream) {
			at := len(out)
			out = append(out, resp...)
			for _, i := range ids {
				putID(out[at+i:], fh.StreamID)
			}
		}
		return out
	})
}

// CannedPingPong is a gRPC server of ping-pong streams that allocates
// nothing per message: a stream's HEADERS get the response headers (200,
// application/grpc), each DATA frame on it msg as one prefixed message,
// and a stream the client ends its trailers, grpc-status 0. A message
// must come in one DATA frame. It does not decode requests.
func CannedPingPong(t testing.TB, msg []byte) string {
	hb := []byte{0x88, 0x0f, 0x10, 16} // :status 200; content-type, literal, not indexed, 16 bytes
	hb = append(hb, "application/grpc"...)
	head := h2wire.AppendFrameHeader(nil, len(hb), http2.FrameHeaders, http2.FlagHeadersEndHeaders, 0)
	head = append(head, hb...)
	data := h2wire.AppendFrameHeader(nil, 5+len(msg), http2.FrameData, 0, 0)
	data = append(data, 0, byte(len(msg)>>24), byte(len(msg)>>16), byte(len(msg)>>8), byte(len(msg)))
	data = append(data, msg...)
	tb := append([]byte{0x00, 11}, "grpc-status"...)
	tb = append(tb, 1, '0')
	trailers := h2wire.AppendFrameHeader(nil, len(tb), http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 0)
	trailers = append(trailers, tb...)
	frame := func(out, f []byte, id uint32) []byte {
		at := len(out)
		out = append(out, f...)
		putID(out[at+5:], id)
		return out
	}
	return serveCanned(t, nil, func(out []byte, fh h2wire.FrameHeader) []byte {
		switch fh.Type {
		case http2.FrameHeaders:
			out = frame(out, head, fh.StreamID)
			if fh.Flags.Has(http2.FlagHeadersEndStream) {
				out = frame(out, trailers, fh.StreamID)
			}
		case http2.FrameData:
			if fh.Length > 0 {
				out = h2wire.AppendWindowUpdate(out, fh.StreamID, fh.Length)
				out = frame(out, data, fh.StreamID)
			}
			if fh.Flags.Has(http2.FlagDataEndStream) {
				out = frame(out, trailers, fh.StreamID)
			}
		}
		return out
	})
}

// putID writes a frame's stream ID where p starts.
func putID(p []byte, id uint32) {
	p[0], p[1], p[2], p[3] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
}

// serveCanned serves HTTP/2 (over TLS with cfg) without decoding it: it
// acknowledges the client's SETTINGS, returns the window of every DATA
// frame on the connection, and appends what answer makes of each frame
// to what it writes next, written once no whole frame header is left
// buffered.
func serveCanned(t testing.TB, cfg *tls.Config, answer func(out []byte, fh h2wire.FrameHeader) []byte) string {
	return Serve(t, func(c net.Conn) {
		var rw io.ReadWriter = c
		if cfg != nil {
			rw = tls.Server(c, cfg)
		}
		r := bufio.NewReaderSize(rw, 64<<10)
		preface := make([]byte, len(h2wire.ClientPreface))
		if _, err := io.ReadFull(r, preface); err != nil {
			return
		}
		out := h2wire.AppendSettings(make([]byte, 0, 64<<10))
		hdr := make([]byte, h2wire.FrameHeaderLen)
		for {
			if len(out) > 0 && r.Buffered() < h2wire.FrameHeaderLen {
				if _, err := rw.Write(out); err != nil {
					return
				}
				out = out[:0]
			}
			if _, err := io.ReadFull(r, hdr); err != nil {
				return
			}
			fh := h2wire.ParseFrameHeader(hdr)
			if _, err := r.Discard(int(fh.Length)); err != nil {
				return
			}
			if fh.Type == http2.FrameData && fh.Length > 0 {
				out = h2wire.AppendWindowUpdate(out, 0, fh.Length)
			}
			if fh.Type == http2.FrameSettings && !fh.Flags.Has(http2.FlagSettingsAck) {
				out = h2wire.AppendSettingsAck(out)
				continue
			}
			out = answer(out, fh)
		}
	})
}
