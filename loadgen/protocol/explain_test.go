package protocol

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTextHead(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n": `"HTTP/1.1 400 Bad Request"`,
		"<!DOCTYPE HTML>\n<html>":                               `"<!DOCTYPE HTML>"`,
		strings.Repeat("a", 50):                                 `"` + strings.Repeat("a", 40) + `"…`,
		"\x00\x00\x06\x04\x00\x00\x00\x00\x00":                  "",
		"\x15\x03\x03\x00\x02":                                  "",
		"ab":                                                    "",
		"\r\nHTTP":                                              "",
	} {
		if got := TextHead([]byte(in)); got != want {
			t.Errorf("TextHead(%q) = %s, want %s", in, got, want)
		}
	}
}

// A handshake its deadline ended says so, with the bound, and still is
// the deadline's error; others keep their words.
func TestHandshakeError(t *testing.T) {
	err := HandshakeError("127.0.0.1:443", 2*time.Second, fmt.Errorf("read: %w", context.DeadlineExceeded))
	if msg := err.Error(); !strings.HasPrefix(msg, "TLS handshake with 127.0.0.1:443 did not finish within 2s") || strings.Contains(msg, "deadline exceeded") {
		t.Errorf("timeout: %s", msg)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("the timeout no longer unwraps to context.DeadlineExceeded")
	}
	err = HandshakeError("h:1", 0, errors.New("remote error: tls: handshake failure"))
	if err.Error() != "TLS handshake with h:1: remote error: tls: handshake failure" {
		t.Errorf("other: %s", err)
	}
}
