package listening

import "testing"

// Each target's line is printed as loadgen serve has always printed it
// (scripts and the docs' examples read it), and Addr reads back the
// address it was given, without the scheme.
func TestLineRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		what, addr, detail string
		line, want         string
	}{
		{"httpbin", "http://127.0.0.1:8080", " (HTTP/1.1 + h2c)",
			"httpbin listening on http://127.0.0.1:8080 (HTTP/1.1 + h2c); Ctrl-C to stop", "127.0.0.1:8080"},
		{"httpbin", "https://127.0.0.1:8443", " (h2 + HTTP/1.1 by ALPN; HTTP/3 on UDP 127.0.0.1:8443)",
			"httpbin listening on https://127.0.0.1:8443 (h2 + HTTP/1.1 by ALPN; HTTP/3 on UDP 127.0.0.1:8443); Ctrl-C to stop", "127.0.0.1:8443"},
		{"httpbin", "http://[::1]:8080", " (HTTP/1.1 + h2c)",
			"httpbin listening on http://[::1]:8080 (HTTP/1.1 + h2c); Ctrl-C to stop", "[::1]:8080"},
		{"tcp echo/sink", "127.0.0.1:9000", "",
			"tcp echo/sink listening on 127.0.0.1:9000; Ctrl-C to stop", "127.0.0.1:9000"},
		{"udp echo/sink", "127.0.0.1:9001", "",
			"udp echo/sink listening on 127.0.0.1:9001; Ctrl-C to stop", "127.0.0.1:9001"},
		{"grpc", "127.0.0.1:9090", ", plaintext (h2c)",
			"grpc listening on 127.0.0.1:9090, plaintext (h2c); Ctrl-C to stop", "127.0.0.1:9090"},
	} {
		line := Line(tc.what, tc.addr, tc.detail)
		if line != tc.line {
			t.Errorf("Line(%q, %q, %q) = %q, want %q", tc.what, tc.addr, tc.detail, line, tc.line)
		}
		if got, ok := Addr(line); !ok || got != tc.want {
			t.Errorf("Addr(%q) = %q, %v; want %q", line, got, ok, tc.want)
		}
	}
}

// Addr says no to the other lines a target prints.
func TestAddrOtherLines(t *testing.T) {
	for _, line := range []string{
		"",
		"each request first calls http://127.0.0.1:8082 (1 at once)",
		"stopped: served 10 requests",
		"httpbin listening on ; Ctrl-C to stop",
	} {
		if got, ok := Addr(line); ok {
			t.Errorf("Addr(%q) = %q, want none", line, got)
		}
	}
}
