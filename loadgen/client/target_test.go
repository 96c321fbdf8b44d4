package client

import (
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		proto, in, want, err string
	}{
		{"", "127.0.0.1:8080/get", "http://127.0.0.1:8080/get", ""},
		{"h2c", "127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		// an out-of-range port still gets its scheme, so the port is what
		// the later error names (WithScheme leaves it alone)
		{"http1", "127.0.0.1:99999/", "http://127.0.0.1:99999/", ""},
		{"", "https://127.0.0.1:8443/", "https://127.0.0.1:8443/", ""},
		{"", "http://:8080/", "", `URL "http://:8080/" has no host name: give one, e.g. http://127.0.0.1:8080/`},
		{"h3", "https://:8443/", "", `URL "https://:8443/" has no host name`},
		// not HTTP: the protocol checks host:port itself
		{"tcp", "127.0.0.1:5000", "127.0.0.1:5000", ""},
		{"grpc", ":5000", ":5000", ""},
	} {
		got, err := CheckTarget(tc.proto, tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("CheckTarget(%q, %q) = %q, %v; want %q", tc.proto, tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("CheckTarget(%q, %q) = %q, %v; want error %q", tc.proto, tc.in, got, err, tc.err)
		}
	}
}
