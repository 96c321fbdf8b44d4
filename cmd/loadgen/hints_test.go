package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"

	"loadgen/targets/httpbin"
	"loadgen/targets/tlscert"
)

// startHTTPSBin starts loadgen's httpbin serving TLS only, with a
// self-signed certificate, and returns its address.
func startHTTPSBin(t *testing.T) string {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0", TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// serveHTTP1Only serves HTTP/1.1 alone (net/http without HTTP/2) on a
// listener of its own.
func serveHTTP1Only(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }), Protocols: &protos}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// serveHTML answers every connection with an HTML page and no status
// line, as Python's http.server answers a request line it cannot read
// (an HTTP/2 preface).
func serveHTML(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("<!DOCTYPE HTML>\n<html lang=\"en\">\n<head><title>Error response</title></head></html>\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// oneLine is s with its wrapping undone, to search for a sentence.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// A failed run says what the target looks like when it is not what the
// protocol expects, and what to use instead.
func TestRunHints(t *testing.T) {
	tlsAddr := startHTTPSBin(t)
	httpURL := startHTTPBin(t)
	httpAddr := strings.TrimPrefix(httpURL, "http://")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"http:// to a TLS port", []string{"http://" + tlsAddr + "/get"},
			[]string{"the server speaks TLS on " + tlsAddr + ": use https:// (https://" + tlsAddr + "/get)"}},
		{"tcp-rr at an HTTP server", []string{"-p", "tcp-rr", httpAddr},
			[]string{`the server answered an HTTP request with "HTTP/1.1 `, `": it is an HTTP server`, "-p tcp-rr is raw TCP", "use -p http1"}},
		{"tcp-crr at a TLS server", []string{"-p", "tcp-crr", tlsAddr},
			[]string{"the server speaks TLS: -p tcp-crr is raw TCP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, append([]string{"run", "-n", "5", "-c", "1", "-t", "1"}, tc.args...)...)
			text := oneLine(stderr)
			for _, w := range tc.want {
				if code != exitFail || !strings.Contains(text, w) {
					t.Errorf("exit %d; stderr does not say %q:\n%s\n%s", code, w, out, stderr)
				}
			}
			if long := longLines(stderr); len(long) > 0 {
				t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
			}
		})
	}
	// A plaintext HTTP/1.1 server that fails requests is not taken for a
	// TLS one.
	code, _, stderr := cli(t, "run", "-n", "5", "-c", "1", "-t", "1", httpURL+"/status/500")
	if code != exitFail || strings.Contains(stderr, "TLS") {
		t.Errorf("/status/500: exit %d, %s", code, stderr)
	}
}

// gRPC and h2c at an HTTP/1.1 server: the connection fails saying the
// server answered HTTP/1.1, its first line quoted, never a hex dump.
func TestConnectHintsHTTP1Server(t *testing.T) {
	h1 := serveHTTP1Only(t)
	html := serveHTML(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "grpc", h1}, `answered "HTTP/1.1 `},
		{[]string{"-p", "grpc", h1}, `": the server answered HTTP/1.1, not HTTP/2/gRPC`},
		{[]string{"-p", "grpc", html}, `answered "<!DOCTYPE HTML>": the server answered HTTP/1.1, not HTTP/2/gRPC`},
		{[]string{"-p", "h2c", "http://" + html + "/"}, `answered "<!DOCTYPE HTML>" to the HTTP/2 preface: the server answered HTTP/1.1, not HTTP/2`},
	} {
		code, _, stderr := cli(t, append([]string{"run", "-n", "5", "-c", "1", "-t", "1"}, tc.args...)...)
		if text := oneLine(stderr); code != exitFail || !strings.Contains(text, tc.want) || strings.Contains(text, "3c 21") {
			t.Errorf("%v: exit %d; stderr does not say %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// A TLS handshake the server never answers says it did not finish within
// the bound, not "context deadline exceeded".
func TestConnectHintTLSHandshakeTimeout(t *testing.T) {
	addr, _ := silentListener(t)
	for _, args := range [][]string{
		{"https://" + addr + "/"},
		{"--new-conn", "https://" + addr + "/"},
		{"-p", "h2", "https://" + addr + "/"},
		{"-p", "grpc", "--tls", addr},
	} {
		code, _, stderr := cli(t, append([]string{"run", "-n", "1", "-c", "1", "-t", "1", "--timeout", "300ms", "--insecure"}, args...)...)
		text := oneLine(stderr)
		if code != exitFail || !strings.Contains(text, "TLS handshake with "+addr+" did not finish within 300ms") || strings.Contains(text, "deadline exceeded") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
