package client

import "testing"

// The frames an HTTP/2 server sends a client that does not speak it.
func TestHTTP2Frame(t *testing.T) {
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
