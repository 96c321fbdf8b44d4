package protocol

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/targets/tlscert"
)

// TestClientCertFiles checks that a certificate file that holds its key needs
// no --key, and loads the chain after the leaf.
func TestClientCertFiles(t *testing.T) {
	ca, err := tlscert.NewCA(tlscert.ECDSAP256, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(tlscert.ECDSAP256, nil, "client.test")
	if err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(t.TempDir(), "both.pem")
	if err := os.WriteFile(both, append(append(append([]byte{}, c.CertPEM...), ca.CertPEM...), c.KeyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := TLS{CertFile: both}.ClientCert()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Certificate) != 2 || got.Leaf == nil || got.Leaf.Subject.String() != c.Leaf.Subject.String() {
		t.Errorf("loaded %d certificates, leaf %v: want the leaf and its CA", len(got.Certificate), got.Leaf)
	}
}

// TestExplainRefusedClientCert checks that a TLS 1.2 server that refuses the
// client certificate does so in the handshake, and the handshake's error says
// what to give.
func TestExplainRefusedClientCert(t *testing.T) {
	server, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlscert.NewCA(tlscert.ECDSAP256, "clients")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := tlscert.New(tlscert.ECDSAP256) // self-signed: not ca's
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{server.TLS}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert})
			s.Handshake()
			s.Close()
		}
	}()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "c.key")
	os.WriteFile(certFile, stranger.CertPEM, 0o600)
	os.WriteFile(keyFile, stranger.KeyPEM, 0o600)
	conf, err := TLS{Enabled: true, Insecure: true, MaxVersion: tls.VersionTLS12, CertFile: certFile, KeyFile: keyFile}.Config("localhost")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), conf)
	if err == nil {
		c.Close()
		t.Fatal("the handshake passed with a certificate of another CA")
	}
	msg := HandshakeError(ln.Addr().String(), 0, err).Error()
	if !strings.Contains(msg, "refused the client certificate") || !strings.Contains(msg, "--cert FILE --key FILE") {
		t.Errorf("handshake error %q: want it to say the server refused the client certificate and what to give", msg)
	}
}
