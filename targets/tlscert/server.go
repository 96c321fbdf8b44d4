package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
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
