package mtls

import (
	"path/filepath"
	"testing"
)

// TestFiles checks the names of a CA's files, which a config rendered for
// another machine (loadgen mesh render --mtls-dir) names without the CA,
// and that they are the files a CA writes.
func TestFiles(t *testing.T) {
	for _, c := range []struct {
		w, peer               Workload
		ca, cert, key, peerID string
	}{
		{Workload{"default", "loadgen"}, Workload{"default", "httpbin"}, "root-cert.pem", "default.loadgen.crt", "default.loadgen.key", "spiffe://cluster.local/ns/default/sa/httpbin"},
		{Workload{"bench", "httpbin"}, Workload{"bench", "loadgen"}, "root-cert.pem", "bench.httpbin.crt", "bench.httpbin.key", "spiffe://cluster.local/ns/bench/sa/loadgen"},
	} {
		dir := t.TempDir()
		f := Files(dir, c.w, c.peer)
		if f.CA != filepath.Join(dir, c.ca) || f.Cert != filepath.Join(dir, c.cert) || f.Key != filepath.Join(dir, c.key) ||
			f.PeerID != c.peerID || f.PeerName != c.peer.DNSName() {
			t.Errorf("Files(%s, %v, %v) = %+v", dir, c.w, c.peer, *f)
		}
		ca, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		issued, _, err := ca.Issue(c.w, c.peer)
		if err != nil {
			t.Fatal(err)
		}
		if *issued != *f || ca.RootFile() != f.CA {
			t.Errorf("the CA wrote %+v (root %s), Files names %+v", *issued, ca.RootFile(), *f)
		}
	}
}

func TestDefaultPair(t *testing.T) {
	client, server := DefaultPair()
	if client != (Workload{"default", "loadgen"}) || server != (Workload{"default", "httpbin"}) {
		t.Errorf("DefaultPair = %+v, %+v", client, server)
	}
}
