package mtls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"testing"
)

func TestIssueFiles(t *testing.T) {
	dir := t.TempDir()
	ca, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	server, client := Workload{"default", "httpbin"}, Workload{"default", "loadgen"}
	files, cert, err := ca.Issue(client, server)
	if err != nil {
		t.Fatal(err)
	}
	if files.PeerID != "spiffe://cluster.local/ns/default/sa/httpbin" {
		t.Errorf("PeerID %q", files.PeerID)
	}
	if got := cert.Leaf.URIs[0].String(); got != "spiffe://cluster.local/ns/default/sa/loadgen" {
		t.Errorf("URI SAN %q", got)
	}
	kp, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	rootPEM, _ := os.ReadFile(files.CA)
	block, _ := pem.Decode(rootPEM)
	root, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(root)
	leaf, _ := x509.ParseCertificate(kp.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the written certificate does not verify against the written root: %v", err)
	}
	if fi, _ := os.Stat(files.Key); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode().Perm())
	}
}

func TestWorkloadValidate(t *testing.T) {
	for _, w := range []Workload{{"", "a"}, {"a", "B"}, {"a", "x/y"}, {"-a", "b"}, {"a", strings.Repeat("x", 64)}} {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
	if err := (Workload{"lab-1", "sa"}).Validate(); err != nil {
		t.Error(err)
	}
}
