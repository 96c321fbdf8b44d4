package protocol

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
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

// A server's alert about the client's certificate comes back with what to
// do, and marked so (ErrClientCertAdvised) through a handshake's error, so
// that a caller adds no second hint; other handshake errors are not
// marked. The caller used to look for "--cert" in the text.
func TestClientCertAdvised(t *testing.T) {
	alert := func(msg string) error { return &net.OpError{Op: "remote error", Err: errors.New(msg)} }
	for _, tc := range []struct {
		name    string
		err     error
		advised bool
		text    string
	}{
		{"required", alert("tls: certificate required"), true,
			"TLS handshake with a:1: remote error: tls: certificate required (the server requires a client certificate: give one with --cert FILE --key FILE, or --cert-p12 FILE)"},
		{"refused", alert("tls: bad certificate"), true,
			"TLS handshake with a:1: remote error: tls: bad certificate (the server refused the client certificate, or wanted one: give --cert FILE --key FILE with a certificate from a CA it trusts)"},
		{"another alert", alert("tls: handshake failure"), false, "TLS handshake with a:1: remote error: tls: handshake failure"},
		{"unknown authority", x509.UnknownAuthorityError{}, false,
			"TLS handshake with a:1: x509: certificate signed by unknown authority (trust the target's CA with --cacert FILE, or skip verification with --insecure)"},
		{"a reset", errors.New("connection reset by peer"), false, "TLS handshake with a:1: connection reset by peer"},
	} {
		err := fmt.Errorf("cannot connect to a:1: %w", HandshakeError("a:1", time.Second, tc.err))
		if got := errors.Is(err, ErrClientCertAdvised); got != tc.advised {
			t.Errorf("%s: advised %v, want %v (%v)", tc.name, got, tc.advised, err)
		}
		if want := "cannot connect to a:1: " + tc.text; err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, want)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: the handshake's error is not wrapped", tc.name)
		}
	}
}
