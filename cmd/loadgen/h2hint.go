package main

import (
	"context"
	"encoding/binary"
	"net"
	"net/url"
	"time"

	"loadgen/results"
)

// http2Hint says, after a run of HTTP/1.1 over plaintext that failed, when
// the target looks like an HTTP/2-only server (a gRPC one): asked a
// request in HTTP/1.1, it answers with HTTP/2 frames, its SETTINGS
// preface or a GOAWAY, which loadgen counts as read errors. "" otherwise.
func http2Hint(ctx context.Context, protocol string, run *results.Run) string {
	if protocol != "" && protocol != "http1" {
		return ""
	}
	e := run.Summary.Errors
	if e.Read+e.Protocol == 0 {
		return ""
	}
	u, err := url.Parse(run.Config.Target)
	if err != nil || u.Scheme != "http" {
		return ""
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	path := u.RequestURI()
	if _, err := c.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: loadgen\r\n\r\n")); err != nil {
		return ""
	}
	buf := make([]byte, 4096)
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil || http2Frame(buf[:n]) == "GOAWAY" {
			break
		}
	}
	frame := http2Frame(buf[:n])
	if frame == "" {
		return ""
	}
	return "the target answered HTTP/1.1 with an HTTP/2 " + frame + " frame: it looks like an HTTP/2 server " +
		"that does not speak HTTP/1.1 (a gRPC server, say). Try -p grpc for gRPC, or -p h2c for HTTP/2 without TLS."
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
