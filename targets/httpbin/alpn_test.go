package httpbin

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/targets/tlscert"
)

// ALPN is what a TLS httpbin serves: h2 first, then HTTP/1.1. A server
// offering them serves each: a client asking for one alone gets it, and
// an answer in it (HTTP/2's SETTINGS after the preface; an HTTP/1.1
// response).
func TestALPN(t *testing.T) {
	if got := ALPN(); !slices.Equal(got, []string{"h2", "http/1.1"}) {
		t.Fatalf("ALPN() = %q, want [h2 http/1.1]", got)
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
		t.Run(proto, func(t *testing.T) {
			c, err := tls.Dial("tcp", s.Addr(), &tls.Config{RootCAs: cert.Pool(), NextProtos: []string{proto}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if got := c.ConnectionState().NegotiatedProtocol; got != proto {
				t.Fatalf("negotiated %q, want %q", got, proto)
			}
			switch proto {
			case "h2":
				if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
					t.Fatal(err)
				}
				fr := http2.NewFramer(c, c)
				if err := fr.WriteSettings(); err != nil {
					t.Fatal(err)
				}
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := f.(*http2.SettingsFrame); !ok {
					t.Errorf("the first frame is %v, want SETTINGS", f.Header())
				}
			case "http/1.1":
				if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/1.1" {
					t.Errorf("GET /healthz: %s %s, want HTTP/1.1 200", resp.Proto, resp.Status)
				}
			default:
				t.Errorf("no check of %q", proto)
			}
		})
	}
}
