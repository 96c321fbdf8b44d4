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
