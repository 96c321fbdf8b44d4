package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"loadgen/targets/tlscert"
)

// h3load's count is what an HTTP/3 server answered, but for the requests
// in flight when the time was up (at most one per connection, not
// counted, as wrk does), in the layout bench.sh parses (wrk's).
func TestH3Load(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	srv := &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert.TLS}}),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			w.Write([]byte("ok"))
		}),
	}
	go srv.Serve(udp)
	defer func() { srv.Close(); udp.Close() }()

	const conns = 2
	r, err := h3load(context.Background(), "https://"+udp.LocalAddr().String()+"/", conns, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(r.lat)); n == 0 || served.Load() < n || served.Load() > n+conns || r.failed != 0 || r.read != 2*n {
		t.Errorf("%d requests, %d failed, %d bytes; the server answered %d", len(r.lat), r.failed, r.read, served.Load())
	}
	var out bytes.Buffer
	r.print(&out)
	m := regexp.MustCompile(`(?m)^  (\d+) requests in [\d.]+s`).FindSubmatch(out.Bytes())
	if m == nil || string(m[1]) != strconv.Itoa(len(r.lat)) || !regexp.MustCompile(`(?m)^Requests/sec: [\d.]+$`).Match(out.Bytes()) || !regexp.MustCompile(`(?m)^     99% [\d.]+ms$`).Match(out.Bytes()) {
		t.Errorf("not wrk's layout:\n%s", out.String())
	}
}
