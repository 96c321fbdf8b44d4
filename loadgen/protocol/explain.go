package protocol

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// HandshakeError is the error of a failed TLS handshake with addr. One
// that its deadline ended says so: "TLS handshake with ADDR did not
// finish within LIMIT" (limit, the bound on connect and handshake; 0 for
// none known), and what that suggests, rather than "context deadline
// exceeded"; it still unwraps to the deadline's error. Others say what to
// do about a certificate (ExplainTLS).
func HandshakeError(addr string, limit time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return &handshakeTimeout{addr: addr, limit: limit, err: err}
	}
	return fmt.Errorf("TLS handshake with %s: %w", addr, ExplainTLS(err))
}

type handshakeTimeout struct {
	addr  string
	limit time.Duration
	err   error
}

func (e *handshakeTimeout) Error() string {
	within := " before its deadline"
	if e.limit > 0 {
		within = " within " + e.limit.String()
	}
	return "TLS handshake with " + e.addr + " did not finish" + within +
		" (the connect and the handshake, --timeout): the server took the connection and did not answer the TLS hello; is TLS served on this port, or is the server overloaded?"
}

func (e *handshakeTimeout) Unwrap() error { return e.err }

// TextHead describes the first bytes a server sent when they read as text
// rather than a binary protocol's frames: an HTTP/1.x status line, an HTML
// page. It is their first line, quoted and cut at 40 bytes ("\"HTTP/1.1 400
// Bad Request\"", "\"<!DOCTYPE HTML>\""); "" when they are not text.
func TextHead(b []byte) string {
	if len(b) < 4 || !utf8.Valid(b) {
		return ""
	}
	end := len(b)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			end = i
			break
		}
		if c < 0x20 && c != '\t' || c == 0x7f {
			return ""
		}
	}
	line, more := b[:end], ""
	if len(line) > 40 {
		line, more = line[:40], "…"
	}
	if len(line) == 0 {
		return ""
	}
	return strconv.Quote(string(line)) + more
}
