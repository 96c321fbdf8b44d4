package grpcecho

import (
	"crypto/tls"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"loadgen/targets/grpcecho/echopb"
	"loadgen/targets/tlscert"
)

// ALPN is what a TLS echo serves: h2 alone (gRPC is HTTP/2). A server
// offering it negotiates it and answers a call over it.
func TestALPN(t *testing.T) {
	if got := ALPN(); !slices.Equal(got, []string{"h2"}) {
		t.Fatalf("ALPN() = %q, want [h2]", got)
	}
	ALPN()[0] = "changed"
	if ALPN()[0] != "h2" {
		t.Fatal("ALPN() hands out a shared slice")
	}
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := cert.ServerConfig(nil, ALPN()...)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{TLS: conf})
	for _, proto := range ALPN() {
		c, err := tls.Dial("tcp", s.Addr(), &tls.Config{RootCAs: cert.Pool(), NextProtos: []string{proto}})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ConnectionState().NegotiatedProtocol; got != proto {
			t.Errorf("negotiated %q, want %q", got, proto)
		}
		c.Close()
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"})
	ec := echopb.NewEchoClient(client(t, s.Addr(), grpc.WithTransportCredentials(creds)))
	if _, err := ec.Unary(ctx(t), &echopb.Payload{Body: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
}
