package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// ServerConfig is a target's TLS configuration serving c with nextProtos.
// With clientCAs (PEM), every connection must present a certificate one of
// them issued: mutual TLS (nil: none asked). PEM holding no certificate
// is an error.
func (c *Cert) ServerConfig(clientCAs []byte, nextProtos ...string) (*tls.Config, error) {
	conf := &tls.Config{Certificates: []tls.Certificate{c.TLS}, NextProtos: nextProtos}
	if clientCAs == nil {
		return conf, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(clientCAs) {
		return nil, errors.New("no PEM certificate found")
	}
	conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
	return conf, nil
}

// ServerOptions are a target's TLS choices as loadgen serve's flags give
// them (errors name the flags): plaintext, a self-signed certificate
// (--tls, --key-type) or one from files (--cert and --key), the
// self-signed one written out for clients (--write-ca), and client
// certificates required (--client-ca).
type ServerOptions struct {
	TLS      bool   // --tls: a self-signed certificate
	KeyType  string // --key-type of the self-signed certificate (ParseKeyType)
	CertFile string // --cert: PEM certificate; implies TLS
	KeyFile  string // --key: its PEM key
	WriteCA  string // --write-ca: where the self-signed certificate goes (PEM)
	ClientCA string // --client-ca: PEM CAs whose client certificates are required
}

// Config is the server's TLS configuration with nextProtos, nil for
// plaintext. It writes the self-signed certificate to WriteCA.
func (o ServerOptions) Config(nextProtos ...string) (*tls.Config, error) {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, fmt.Errorf("--cert and --key go together")
	}
	if !o.TLS && o.CertFile == "" {
		if o.WriteCA != "" {
			return nil, fmt.Errorf("--write-ca needs --tls")
		}
		if o.ClientCA != "" {
			return nil, fmt.Errorf("--client-ca asks for client certificates in the TLS handshake: add --tls (or --cert/--key)")
		}
		return nil, nil
	}
	var cert *Cert
	var err error
	if o.CertFile != "" {
		cert, err = Load(o.CertFile, o.KeyFile)
	} else {
		kt, kerr := ParseKeyType(o.KeyType)
		if kerr != nil {
			return nil, fmt.Errorf("--key-type: %w", kerr)
		}
		cert, err = New(kt)
	}
	if err != nil {
		return nil, err
	}
	if o.WriteCA != "" {
		if cert.CertPEM == nil {
			return nil, fmt.Errorf("--write-ca works with the self-signed certificate only")
		}
		if err := os.WriteFile(o.WriteCA, cert.CertPEM, 0o644); err != nil {
			return nil, fmt.Errorf("--write-ca: %w", err)
		}
	}
	var clientCAs []byte
	if o.ClientCA != "" {
		if clientCAs, err = os.ReadFile(o.ClientCA); err != nil {
			return nil, fmt.Errorf("--client-ca: %w", err)
		}
	}
	c, err := cert.ServerConfig(clientCAs, nextProtos...)
	if err != nil {
		return nil, fmt.Errorf("--client-ca %s: %w", o.ClientCA, err)
	}
	return c, nil
}

// Mode says how the server takes TLS, for its first line: "", or
// ", client certificates from CA.pem required".
func (o ServerOptions) Mode() string {
	if o.ClientCA == "" {
		return ""
	}
	return ", client certificates from " + o.ClientCA + " required"
}
