package h2

import (
	"testing"

	"loadgen/loadgen/protocol"
)

// The x/net client's behaviour is tested with the lean client's, by the
// tests that run on each client (eachClient).

func TestLibraryValidate(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "http://127.0.0.1/"},
		{URL: "https://x/", Streams: -1},
		{URL: "https://x/", TLS: protocol.TLS{CAFile: "/nonexistent"}},
	} {
		_, want := NewDialer(cfg)
		_, err := NewLibraryDialer(cfg)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%+v: %v, want NewDialer's error %v", cfg, err, want)
		}
	}
}
