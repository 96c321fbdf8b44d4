package h2

import (
	"context"
	"testing"

	"loadgen/loadgen/protocol"
)

// client is one of the package's two HTTP/2 clients: the tests of what both
// promise run on each (eachClient).
type client struct {
	name string
	new  func(Config) (protocol.Dialer, error)
	// bodyBytes is set when Outcome.Bytes and Written count the bodies
	// (x/net's client), not the stream's frames (the lean client).
	bodyBytes bool
}

var (
	lean = client{name: "lean", new: func(cfg Config) (protocol.Dialer, error) {
		d, err := NewDialer(cfg)
		if err != nil {
			return nil, err // not a nil *Dialer in a non-nil protocol.Dialer
		}
		return d, nil
	}}
	xnet    = client{name: "x-net", new: NewLibraryDialer, bodyBytes: true}
	clients = []client{lean, xnet}
)

// testDialer is what the tests use of either client's Dialer.
type testDialer interface {
	protocol.Dialer
	protocol.ConnCounter
}

// eachClient runs test as a subtest per client.
func eachClient(t *testing.T, test func(t *testing.T, cl client)) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) { test(t, cl) })
	}
}

// dialer returns the client's Dialer for cfg.
func (cl client) dialer(t testing.TB, cfg Config) testDialer {
	t.Helper()
	d, err := cl.new(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d.(testDialer)
}

// dial returns the client's Dialer for cfg and a Conn from it, closed when
// the test ends.
func (cl client) dial(t testing.TB, cfg Config) (testDialer, protocol.Conn) {
	t.Helper()
	d := cl.dialer(t, cfg)
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c
}

// dialN dials n Conns from d, closed when the test ends.
func dialN(t testing.TB, d protocol.Dialer, n int) []protocol.Conn {
	t.Helper()
	cs := make([]protocol.Conn, n)
	for i := range cs {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs
}
