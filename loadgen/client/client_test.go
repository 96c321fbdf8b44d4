package client

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
)

// A Spec is checked before anything is dialed: each mistake is one line
// that says what to do.
func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Protocol: "smtp", Target: "127.0.0.1:25"}, "unknown protocol"},
		{Spec{Target: "ftp://127.0.0.1/"}, "unsupported scheme"},
		{Spec{Target: "http//nohost"}, "malformed URL"},
		{Spec{Protocol: "h2", Target: "http://127.0.0.1:1/"}, "-p h2 is HTTP/2 over TLS"},
		{Spec{Protocol: "h2c", Target: "https://127.0.0.1:1/"}, "-p h2c is cleartext"},
		{Spec{Target: "http://127.0.0.1:1/", Streams: 4}, "--streams needs -p h2"},
		{Spec{Target: "http://127.0.0.1:1/", Size: 100}, "--size and --health apply to grpc and tcp"},
		{Spec{Target: "http://127.0.0.1:1/", TLS: protocol.TLS{Insecure: true}}, "TLS options given for a plaintext target"},
		{Spec{Target: "https://127.0.0.1:1/", TLS: protocol.TLS{MinVersion: tls.VersionTLS11}}, "--tls-version 1.1: loadgen's clients speak TLS 1.2 and 1.3 only: use 1.2 or 1.3"},
		{Spec{Protocol: "h2", Target: "https://127.0.0.1:1/", TLS: protocol.TLS{MinVersion: tls.VersionTLS10}}, "--tls-version 1.0: loadgen's clients speak TLS 1.2 and 1.3 only"},
		{Spec{Protocol: "grpc", Target: "127.0.0.1:1", TLS: protocol.TLS{Enabled: true, MinVersion: tls.VersionTLS11}}, "use 1.2 or 1.3"},
		{Spec{Protocol: "tcp-rr", Target: "127.0.0.1:1", Body: []byte("x")}, "sends raw bytes"},
		{Spec{Protocol: "tcp-rr", Target: "nohostport"}, "want host:port"},
		{Spec{Protocol: "grpc-stream", Target: "127.0.0.1:1", Health: true}, "a unary call: use -p grpc"},
		{Spec{Target: "http://127.0.0.1:1/", Call: "a.B/C"}, "--call names a gRPC method"},
		{Spec{Protocol: "grpc", Target: "127.0.0.1:1", Data: "{}"}, "give the method with --call"},
		{Spec{Protocol: "h2c", Target: "http://127.0.0.1:1/", Client: "grpc-go"}, "--client grpc-go drives -p grpc or grpc-stream"},
		{Spec{Target: "http://127.0.0.1:1/", Client: "curl"}, `--client "curl"`},
		{Spec{Target: "http://localhost:1/", NetNS: "lab"}, "needs the target as an IP address"},
	} {
		s := tc.s
		if _, err := New(&s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.s, err, tc.want)
		}
	}
}

// New completes a Spec with what it implies, and Record keeps it.
func TestSpecDefaults(t *testing.T) {
	s := Spec{Target: "127.0.0.1:8080/get", Body: []byte("{}")}
	d, err := New(&s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*http1.Dialer); !ok {
		t.Errorf("dialer %T", d)
	}
	var c results.Config
	s.Record(&c)
	if c.Protocol != "http1" || c.Target != "http://127.0.0.1:8080/get" || c.Method != "POST" || c.BodyBytes != 2 {
		t.Errorf("recorded %+v", c)
	}
	s = Spec{Protocol: "tcp-crr", Target: "127.0.0.1:9000"}
	if d, err = New(&s); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*tcp.Dialer); !ok || s.Size != tcp.DefaultSize {
		t.Errorf("dialer %T, size %d", d, s.Size)
	}
	if s = (Spec{Target: "https://127.0.0.1:8443/"}); true {
		if _, err := New(&s); err != nil || !s.TLS.Enabled {
			t.Errorf("https:// must turn TLS on: %v %+v", err, s.TLS)
		}
	}
}

func TestWithScheme(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080/get": "http://127.0.0.1:8080/get", "localhost:80": "http://localhost:80",
		"http://x:1/": "http://x:1/", "http//nohost": "http//nohost", "nohost": "nohost", "x:port": "x:port",
	} {
		if got := WithScheme(in); got != want {
			t.Errorf("WithScheme(%q) = %q, want %q", in, got, want)
		}
	}
}

// Described names every protocol a Spec takes, once.
func TestDescribedCoversProtocols(t *testing.T) {
	var names []string
	for _, d := range Described() {
		name, _, _ := strings.Cut(d, ": ")
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, Protocols()) {
		t.Errorf("Described names %v, Protocols %v", names, Protocols())
	}
}
