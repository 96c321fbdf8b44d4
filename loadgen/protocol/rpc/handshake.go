package rpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// readBufferSize is each connection's read buffer: larger than a frame.
const readBufferSize = 32 << 10

// recvWindow is the window this client gives every stream and the
// connection: it reads and discards as fast as frames come, so the peer
// never waits for a WINDOW_UPDATE of a message below 64 MiB.
const recvWindow = 1 << 30

// connect dials the target, does the TLS handshake, sends the HTTP/2
// preface and settings, and reads the server's settings: until they come
// the target is not known to speak HTTP/2. Every error is one line saying
// what the target did.
func (t *transport) connect(ctx context.Context) error {
	target := t.d.s.Target
	var nd net.Dialer // TCP_NODELAY is Go's default
	raw, err := nd.DialContext(ctx, "tcp", target)
	if err != nil {
		return fmt.Errorf("grpc: %w", err)
	}
	// The context bounds the handshake through the connection's deadline.
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	nc, err := t.handshake(ctx, raw)
	if !stop() && err == nil {
		err = fmt.Errorf("grpc: dialing %s: %w", target, ctx.Err())
	}
	if err != nil {
		raw.Close()
		return err
	}
	t.nc = nc
	t.d.opened.Add(1)
	go t.readLoop()
	return nil
}

func (t *transport) handshake(ctx context.Context, raw net.Conn) (net.Conn, error) {
	target := t.d.s.Target
	nc := raw
	if t.d.tls != nil {
		tc := tls.Client(raw, t.d.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, explainHandshake(target, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			if p == "" {
				p = "none"
			}
			return nil, fmt.Errorf("grpc: %s does not offer HTTP/2 over TLS (ALPN h2; it chose %s): it is not a gRPC server, or serves only HTTP/1.1", target, p)
		}
		nc = tc
	}

	if _, err := nc.Write(h2wire.AppendPreface(nil, recvWindow)); err != nil {
		return nil, fmt.Errorf("grpc: writing the HTTP/2 preface to %s: %w", target, err)
	}

	t.br = bufio.NewReaderSize(nc, readBufferSize)
	h, err := t.br.Peek(h2wire.FrameHeaderLen)
	if err != nil {
		return nil, t.notHTTP2(h, err)
	}
	fh := h2wire.ParseFrameHeader(h)
	if fh.Type != http2.FrameSettings || fh.Flags.Has(http2.FlagSettingsAck) || fh.StreamID != 0 {
		return nil, t.notHTTP2(h, nil)
	}
	n := int(fh.Length)
	if n%6 != 0 || n > h2wire.DefaultMaxFrame {
		return nil, t.notHTTP2(h, nil)
	}
	p, err := t.br.Peek(h2wire.FrameHeaderLen + n)
	if err != nil {
		return nil, fmt.Errorf("grpc: reading the HTTP/2 settings of %s: %w", target, err)
	}
	if err := t.applySettings(p[h2wire.FrameHeaderLen:]); err != nil {
		return nil, fmt.Errorf("grpc: %s: %w", target, err)
	}
	t.br.Discard(h2wire.FrameHeaderLen + n)
	if _, err := nc.Write(h2wire.AppendSettingsAck(nil)); err != nil {
		return nil, fmt.Errorf("grpc: writing to %s: %w", target, err)
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}

	// The header blocks fit the peer's HPACK table, as its settings say.
	table := uint32(h2wire.DefaultTableSize)
	for q := p[h2wire.FrameHeaderLen:]; len(q) >= 6; q = q[6:] {
		if http2.SettingID(binary.BigEndian.Uint16(q)) == http2.SettingHeaderTableSize {
			table = binary.BigEndian.Uint32(q[2:])
		}
	}
	var used uint32
	t.first, t.next, used = headerBlocks(t.d.fields, table)
	t.tableUsed = used
	t.dec = h2wire.NewDecoder(h2wire.DefaultTableSize, responseNames[:]...) // SETTINGS_HEADER_TABLE_SIZE left at its default
	return nc, nil
}

// notHTTP2 explains what the target sent instead of HTTP/2 settings.
func (t *transport) notHTTP2(head []byte, err error) error {
	target := t.d.s.Target
	if n := t.br.Buffered(); n > len(head) {
		head, _ = t.br.Peek(min(n, 64))
	}
	switch {
	case bytes.HasPrefix(head, []byte("HTTP/")):
		line, _, _ := bytes.Cut(head, []byte("\r\n"))
		return fmt.Errorf("grpc: %s answered in HTTP/1 (%q), not HTTP/2: it is not a gRPC server (an HTTP/1.1-only server or proxy?)", target, line)
	case len(head) >= 2 && head[0] == 0x15 && head[1] == 0x03:
		return fmt.Errorf("grpc: %s answered with a TLS alert: it expects TLS, add --tls", target)
	case len(head) == 0:
		how := "closed the connection"
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			how = "accepted the connection but sent nothing before the dial deadline"
		case err != nil && !errors.Is(err, io.EOF):
			how = "reset the connection"
		}
		hint := " (does it expect TLS? add --tls)"
		if t.d.tls != nil {
			hint = ""
		}
		return fmt.Errorf("grpc: %s %s without an HTTP/2 answer: is it a gRPC server?%s", target, how, hint)
	case err != nil:
		return fmt.Errorf("grpc: reading the HTTP/2 settings of %s: %w", target, err)
	}
	return fmt.Errorf("grpc: %s did not answer with HTTP/2 settings (first bytes % x): it is not a gRPC server", target, head)
}

// explainHandshake turns a TLS handshake error into what to do about it.
func explainHandshake(target string, err error) error {
	switch msg := err.Error(); {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("grpc: TLS handshake with %s: %w (the target speaks plaintext: drop --tls)", target, err)
	case strings.Contains(msg, "no application protocol"):
		return fmt.Errorf("grpc: TLS handshake with %s: %w (it does not offer HTTP/2, ALPN h2: not a gRPC server, or HTTP/1.1 only)", target, err)
	}
	return fmt.Errorf("grpc: TLS handshake with %s: %w", target, protocol.ExplainTLS(err))
}
