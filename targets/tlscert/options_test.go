package tlscert

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerOptions is loadgen serve's TLS policy, flag by flag: what
// makes plaintext, which flags need others, what the self-signed
// certificate and --write-ca give, and how --client-ca's file is taken.
func TestServerOptions(t *testing.T) {
	dir := t.TempDir()
	served, err := New(ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	ca, err := NewCA(ECDSAP256, "clients")
	if err != nil {
		t.Fatal(err)
	}
	caFile, junk := filepath.Join(dir, "client-ca.pem"), filepath.Join(dir, "junk.pem")
	for path, data := range map[string][]byte{certFile: served.CertPEM, keyFile: served.KeyPEM, caFile: ca.CertPEM, junk: []byte("no PEM here\n")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCA := filepath.Join(dir, "ca.pem")
	for _, tc := range []struct {
		name       string
		o          ServerOptions
		plaintext  bool
		clientAuth bool
		wroteCA    bool
		mode       string
		err        string
	}{
		{name: "none", o: ServerOptions{KeyType: "rsa"}, plaintext: true},
		{name: "cert alone", o: ServerOptions{CertFile: certFile}, err: "--cert and --key go together"},
		{name: "key alone", o: ServerOptions{TLS: true, KeyFile: keyFile}, err: "--cert and --key go together"},
		{name: "write-ca plaintext", o: ServerOptions{WriteCA: writeCA}, err: "--write-ca needs --tls"},
		{name: "client-ca plaintext", o: ServerOptions{ClientCA: caFile}, err: "--client-ca asks for client certificates in the TLS handshake: add --tls (or --cert/--key)"},
		{name: "bad key type", o: ServerOptions{TLS: true, KeyType: "dsa"}, err: `--key-type: unknown key type "dsa"`},
		{name: "self-signed", o: ServerOptions{TLS: true, KeyType: "ecdsa"}},
		{name: "self-signed written", o: ServerOptions{TLS: true, KeyType: "rsa", WriteCA: writeCA}, wroteCA: true},
		{name: "files imply tls", o: ServerOptions{CertFile: certFile, KeyFile: keyFile}},
		{name: "files, write-ca", o: ServerOptions{CertFile: certFile, KeyFile: keyFile, WriteCA: writeCA}, err: "--write-ca works with the self-signed certificate only"},
		{name: "write-ca nowhere", o: ServerOptions{TLS: true, WriteCA: filepath.Join(dir, "no", "ca.pem")}, err: "--write-ca: "},
		{name: "mutual", o: ServerOptions{TLS: true, ClientCA: caFile}, clientAuth: true, mode: ", client certificates from " + caFile + " required"},
		{name: "client-ca missing", o: ServerOptions{TLS: true, ClientCA: filepath.Join(dir, "none.pem")}, err: "--client-ca: "},
		{name: "client-ca no PEM", o: ServerOptions{TLS: true, ClientCA: junk}, err: "--client-ca " + junk + ": no PEM certificate found"},
	} {
		os.Remove(writeCA)
		c, err := tc.o.Config("h2", "http/1.1")
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
			continue
		case tc.plaintext != (c == nil):
			t.Errorf("%s: config %v, want plaintext %v", tc.name, c, tc.plaintext)
			continue
		case c == nil:
		case len(c.Certificates) != 1 || strings.Join(c.NextProtos, ",") != "h2,http/1.1":
			t.Errorf("%s: %d certificates, ALPN %q", tc.name, len(c.Certificates), c.NextProtos)
		case (c.ClientAuth == tls.RequireAndVerifyClientCert) != tc.clientAuth:
			t.Errorf("%s: client auth %v", tc.name, c.ClientAuth)
		}
		if _, err := os.Stat(writeCA); (err == nil) != tc.wroteCA {
			t.Errorf("%s: CA written %v, want %v", tc.name, err == nil, tc.wroteCA)
		}
		if got := tc.o.Mode(); got != tc.mode {
			t.Errorf("%s: Mode() = %q, want %q", tc.name, got, tc.mode)
		}
	}
}
