package loadgen

import (
	"strings"
	"testing"
)

func TestCheckNewConn(t *testing.T) {
	for _, tc := range []struct {
		newConn bool
		streams int
		err     string
	}{
		{false, 0, ""},
		{false, 8, ""},
		{true, 0, ""},
		{true, 1, ""},
		{true, 2, "-m 2 shares one connection between 2 streams"},
		{true, 8, "--new-conn opens a connection (a TLS handshake) per request, and -m 8"},
	} {
		var c Config
		c.NewConn, c.Streams = tc.newConn, tc.streams
		err := c.CheckNewConn()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("NewConn %v, Streams %d: err = %v, want %q", tc.newConn, tc.streams, err, tc.err)
		}
	}
}
