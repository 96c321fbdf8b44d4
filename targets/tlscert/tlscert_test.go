package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"testing"
)

func TestIssueVerifiesAgainstCA(t *testing.T) {
	ca, err := NewCA(ECDSAP256, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := url.Parse("spiffe://cluster.local/ns/default/sa/server")
	leaf, err := ca.Issue(RSA2048, []*url.URL{id})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.Leaf.URIs) != 1 || leaf.Leaf.URIs[0].String() != id.String() {
		t.Errorf("URIs %v, want [%s]", leaf.Leaf.URIs, id)
	}
	if leaf.Leaf.IsCA || len(leaf.Leaf.DNSNames) != 0 || leaf.Leaf.Subject.String() != "" {
		t.Errorf("leaf: IsCA %v, DNS %v, subject %q: want a workload certificate with the URI only", leaf.Leaf.IsCA, leaf.Leaf.DNSNames, leaf.Leaf.Subject)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("verify for %v: %v", usage, err)
		}
	}
	other, _ := NewCA(ECDSAP256, "elsewhere")
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: other.Pool()}); err == nil {
		t.Error("the leaf verifies against another CA")
	}
	if _, err := leaf.Issue(ECDSAP256, []*url.URL{id}); err == nil {
		t.Error("a leaf issued a certificate")
	}
}

// TestIssueMutualTLS checks that two workload certificates of one CA complete
// a TLS handshake in which each side verifies the other.
func TestIssueMutualTLS(t *testing.T) {
	ca, err := NewCA(RSA2048, "cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	server, _ := ca.Issue(ECDSAP256, []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/a/sa/server"}})
	client, _ := ca.Issue(ECDSAP256, []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/a/sa/client"}})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{server.TLS}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			peer <- err.Error()
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			peer <- err.Error()
			return
		}
		peer <- tc.ConnectionState().PeerCertificates[0].URIs[0].String()
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{
		Certificates: []tls.Certificate{client.TLS}, RootCAs: ca.Pool(),
		// Workload certificates carry no DNS name: verify the chain and the URI.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			cert, err := x509.ParseCertificate(raw[0])
			if err == nil {
				_, err = cert.Verify(x509.VerifyOptions{Roots: ca.Pool()})
			}
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := <-peer; got != "spiffe://cluster.local/ns/a/sa/client" {
		t.Errorf("server saw %q", got)
	}
}

func TestKeyTypeDescribe(t *testing.T) {
	for kt, want := range map[KeyType]string{RSA2048: "RSA-2048", ECDSAP256: "ECDSA P-256", "": "RSA-2048"} {
		if got := kt.Describe(); got != want {
			t.Errorf("%q.Describe() = %q, want %q", kt, got, want)
		}
	}
}
