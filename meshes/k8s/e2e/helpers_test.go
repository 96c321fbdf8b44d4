package e2e

import (
	"net"
	"net/url"
	"testing"
)

func hostPort(t *testing.T, host string) (string, string) {
	t.Helper()
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	h, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}
