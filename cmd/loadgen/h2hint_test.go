package main

import (
	"strings"
	"testing"
)

// HTTP/1.1 aimed at an HTTP/2-only port (a gRPC server) fails every
// request with read errors; the run then says the target looks like an
// HTTP/2 server and which protocol to use, not only "Socket errors: read".
func TestHTTP1AtHTTP2ServerSaysSo(t *testing.T) {
	g := startGRPCEcho(t)
	code, out, stderr := cli(t, "run", "-c", "1", "-t", "1", "-d", "500ms", "http://"+g.Addr()+"/")
	text := strings.Join(strings.Fields(stderr), " ")
	if code != exitFail || !strings.Contains(text, "looks like an HTTP/2 server") || !strings.Contains(text, "-p grpc") || !strings.Contains(text, "-p h2c") {
		t.Errorf("exit %d; stderr does not say the target speaks HTTP/2:\n%s\n%s", code, out, stderr)
	}
	if long := longLines(stderr); len(long) > 0 {
		t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
	// An HTTP/1.1 server that fails every request is not taken for one.
	url := startHTTPBin(t)
	code, _, stderr = cli(t, "run", "-c", "1", "-t", "1", "-d", "300ms", url+"/status/500")
	if code != exitFail || strings.Contains(stderr, "HTTP/2") {
		t.Errorf("/status/500: exit %d, %s", code, stderr)
	}
}

// The frames an HTTP/2 server sends a client that does not speak it.
func TestLooksLikeHTTP2(t *testing.T) {
	settings := []byte{0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100}
	goaway := []byte{0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{settings, "SETTINGS"},
		{append(append([]byte{}, settings...), goaway...), "SETTINGS"},
		{goaway, "GOAWAY"},
		{[]byte("HTTP/1.1 400 Bad Request\r\n\r\n"), ""},
		{[]byte{0, 0}, ""},
		{nil, ""},
	} {
		if got := http2Frame(tc.b); got != tc.want {
			t.Errorf("http2Frame(%q) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
