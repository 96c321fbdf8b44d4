package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"net"
	"net/url"
	"strings"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// hintTimeout bounds what Hint does: a connect, a request or a TLS
// handshake, and the answer.
const hintTimeout = 2 * time.Second

// Hint says, after a run of proto at target that failed with errs, what
// the target looks like when it is not what the protocol expects, and
// what to use instead:
//
//   - HTTP/1.1 over http:// at an HTTP/2-only server (a gRPC one), which
//     answers with HTTP/2 frames;
//   - HTTP/1.1 over http:// at a TLS port ("the server speaks TLS: use
//     https://…");
//   - tcp-rr, tcp-crr or tcp-stream at an HTTP, HTTP/2 or TLS server,
//     where they expect an echo server or a sink (loadgen serve tcp).
//
// It looks with a connection or two of its own from this network
// namespace, each bounded by ctx and two seconds; "" when it finds
// nothing to say. (gRPC and h2c at an HTTP/1.1 server, and TLS handshakes
// that time out, are told when the connection fails, by the protocols.)
func Hint(ctx context.Context, proto, target string, errs results.Errors) string {
	switch proto {
	case "", "http1":
		if errs.Read+errs.Protocol+errs.Status == 0 {
			return ""
		}
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return ""
		}
		addr := u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
		head := ask(ctx, addr, "GET "+u.RequestURI()+" HTTP/1.1\r\nHost: "+u.Host+"\r\nUser-Agent: loadgen\r\n\r\n")
		if frame := http2Frame(head); frame != "" {
			return "the target answered HTTP/1.1 with an HTTP/2 " + frame + " frame: it looks like an HTTP/2 server " +
				"that does not speak HTTP/1.1 (a gRPC server, say). Try -p grpc for gRPC, or -p h2c for HTTP/2 without TLS."
		}
		if speaksTLS(ctx, addr, u.Hostname()) {
			https := *u
			https.Scheme = "https"
			if u.Port() == "" {
				https.Host = addr // port 80, kept: https:// alone would mean 443
			}
			return "the server speaks TLS on " + addr + ": use https:// (" + https.String() + "), with --cacert or --insecure for a certificate the system does not trust."
		}
	case "tcp-rr", "tcp-crr", "tcp-stream":
		if errs.Read+errs.Write+errs.Protocol == 0 {
			return ""
		}
		addr, err := hostPort(target)
		if err != nil {
			return ""
		}
		what := "-p " + proto + " is raw TCP: it expects an echo server (tcp-rr, tcp-crr) or a sink (tcp-stream), as loadgen serve tcp is"
		if speaksTLS(ctx, addr, "") {
			return "the server speaks TLS: " + what + ". For HTTPS, use -p http1 (or h2) with https://."
		}
		head := ask(ctx, addr, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nUser-Agent: loadgen\r\nConnection: close\r\n\r\n")
		switch {
		case bytes.HasPrefix(head, []byte("HTTP/")):
			return "the server answered an HTTP request with " + protocol.TextHead(head) + ": it is an HTTP server, and " +
				what + ". For HTTP, use -p http1 (or h2c, h2) with http:// or https://."
		case http2Frame(head) != "":
			return "the server answered with an HTTP/2 " + http2Frame(head) + " frame: it is an HTTP/2 (gRPC?) server, and " +
				what + ". Use -p grpc or -p h2c."
		}
	}
	return ""
}

// ask sends req on a new connection to addr and returns the first bytes
// of the answer (up to 4 KiB, or a GOAWAY), nil for none.
func ask(ctx context.Context, addr, req string) []byte {
	ctx, cancel := context.WithTimeout(ctx, hintTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return nil
	}
	buf := make([]byte, 4096)
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil || http2Frame(buf[:n]) == "GOAWAY" || bytes.Contains(buf[:n], []byte("\r\n")) {
			break
		}
	}
	return buf[:n]
}

// speaksTLS tells whether the server at addr completes a TLS handshake
// (any certificate: only whether it speaks TLS is asked).
func speaksTLS(ctx context.Context, addr, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, hintTimeout)
	defer cancel()
	if name == "" {
		name, _, _ = net.SplitHostPort(addr)
	}
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, ServerName: strings.Trim(name, "[]"), NextProtos: []string{"h2", "http/1.1"}}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// http2Frame names the first HTTP/2 connection frame that b starts with, a
// server's SETTINGS (its preface) or a GOAWAY, each on stream 0 with a
// length that fits its type; "" when b does not start with one.
func http2Frame(b []byte) string {
	for len(b) >= 9 {
		length := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		typ, stream := b[3], binary.BigEndian.Uint32(b[5:9])&0x7fffffff
		if stream != 0 || length > 1<<14 {
			return ""
		}
		switch {
		case typ == 0x4 && length%6 == 0: // SETTINGS
			return "SETTINGS"
		case typ == 0x7 && length >= 8: // GOAWAY
			return "GOAWAY"
		case typ == 0x8 || typ == 0x6: // WINDOW_UPDATE, PING: look further
			b = b[min(len(b), 9+length):]
		default:
			return ""
		}
	}
	return ""
}
