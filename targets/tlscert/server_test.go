package tlscert

import (
	"crypto/tls"
	"net"
	"reflect"
	"strings"
	"testing"
)

// TestServerConfig hands each configuration to a real handshake: without
// client CAs any client is served; with them only a client holding a
// certificate they issued.
func TestServerConfig(t *testing.T) {
	server, err := New(ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewCA(ECDSAP256, "clients")
	if err != nil {
		t.Fatal(err)
	}
	issued, err := ca.Issue(ECDSAP256, nil, "client")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA(ECDSAP256, "others")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		clientCAs  []byte
		clientCert *Cert // nil: the client presents none
		wantErr    string
		wantServed bool
	}{
		{"no client CA, no client cert", nil, nil, "", true},
		{"no client CA, a client cert", nil, issued, "", true},
		{"client CA, no client cert", ca.CertPEM, nil, "", false},
		{"client CA, its cert", ca.CertPEM, issued, "", true},
		{"another CA's cert", other.CertPEM, issued, "", false},
		{"no PEM", []byte("not a certificate"), nil, "no PEM certificate found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := server.ServerConfig(tc.clientCAs, "h2", "http/1.1")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(conf.NextProtos, []string{"h2", "http/1.1"}) {
				t.Errorf("NextProtos %v", conf.NextProtos)
			}
			if got := handshake(t, conf, server, tc.clientCert); got != tc.wantServed {
				t.Errorf("served %v, want %v", got, tc.wantServed)
			}
		})
	}
}

// handshake runs a TLS handshake over a pipe and says whether the server
// completed it.
func handshake(t *testing.T, conf *tls.Config, server, client *Cert) bool {
	t.Helper()
	sc, cc := net.Pipe()
	defer sc.Close()
	defer cc.Close()
	cconf := &tls.Config{RootCAs: server.Pool(), ServerName: "localhost"}
	if client != nil {
		cconf.Certificates = []tls.Certificate{client.TLS}
	}
	done := make(chan error, 1)
	go func() {
		c := tls.Client(cc, cconf)
		err := c.Handshake()
		if err == nil {
			// TLS 1.3: the server checks the client's certificate after
			// the client's Finished; reading waits for its verdict.
			_, err = c.Read(make([]byte, 1))
		}
		cc.Close()
		done <- err
	}()
	s := tls.Server(sc, conf)
	err := s.Handshake()
	if err == nil {
		s.Write([]byte{1})
	}
	sc.Close()
	<-done
	return err == nil
}
