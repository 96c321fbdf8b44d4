package h2

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/targets/tlscert"
)

// countingListener counts the connections a server accepts and those still
// open.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
	open     atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	l.open.Add(1)
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

func listen(t testing.TB) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &countingListener{Listener: ln}
}

var quiet = log.New(io.Discard, "", 0)

// testServer is an in-process net/http server.
type testServer struct {
	URL string
	ln  *countingListener
	srv *http.Server
}

// h2cServer serves HTTP/2 with prior knowledge (and, if h1, HTTP/1.1).
func h2cServer(t testing.TB, h http.Handler, h1, h2 bool) *testServer {
	t.Helper()
	var p http.Protocols
	p.SetHTTP1(h1)
	p.SetUnencryptedHTTP2(h2)
	ln := listen(t)
	s := &testServer{URL: "http://" + ln.Addr().String(), ln: ln, srv: &http.Server{Handler: h, Protocols: &p, ErrorLog: quiet}}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

var (
	certOnce sync.Once
	certVal  *tlscert.Cert
	certErr  error
)

func testCert(t testing.TB) *tlscert.Cert {
	t.Helper()
	certOnce.Do(func() { certVal, certErr = tlscert.New(tlscert.ECDSAP256) })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return certVal
}

// caFile writes the test certificate as a PEM file for TLS.CAFile.
func caFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, testCert(t).CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tlsServer serves HTTPS, offering the given ALPN protocols.
func tlsServer(t testing.TB, h http.Handler, alpn ...string) *testServer {
	t.Helper()
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	ln := listen(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}, NextProtos: alpn}
	s := &testServer{URL: "https://" + ln.Addr().String(), ln: ln, srv: &http.Server{Handler: h, Protocols: &p, TLSConfig: cfg, ErrorLog: quiet}}
	go s.srv.Serve(tls.NewListener(ln, cfg))
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// serveRaw accepts connections and runs serve on each, for frame-level
// test servers. It returns the listener's address.
// serveRaw runs serve on each connection to a loopback listener.
func serveRaw(t testing.TB, serve func(net.Conn)) string { return h2peer.Serve(t, serve) }
