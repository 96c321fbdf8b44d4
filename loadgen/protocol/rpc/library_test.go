package rpc

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/targets/grpcecho"
)

// The tests that run one scenario against both clients are with the lean
// client's, over the clients table (grpc_test.go); these are the library
// client's own.

func TestLibraryConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Target: "http://127.0.0.1:1"},
		{Target: "127.0.0.1:1", Mode: Stream, Health: true},
		{Target: "127.0.0.1:1", Metadata: []string{"grpc-timeout: 1S"}},
	} {
		if _, err := NewLibraryDialer(cfg); err == nil {
			t.Errorf("NewLibraryDialer(%+v) accepted it", cfg)
		}
	}
}

// A reply of the wrong length is a protocol error, as with the lean client.
func TestLibraryBadReply(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	c := dial(t, libraryClient.dialer(t, Config{Target: srv.Addr(), Size: 10}))
	lc := c.(*libConn)
	lc.reply.check.want = 11 // the server echoes 10 bytes
	if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.Protocol || o.Bytes != wireSize(10) {
		t.Fatalf("outcome %+v, want a protocol error", o)
	}
}
