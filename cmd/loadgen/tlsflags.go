package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"loadgen/loadgen/protocol"
)

// tlsFlags are the client's TLS flags, shared by every protocol.
type tlsFlags struct {
	enable   bool
	insecure bool
	caFile   string
	sni      string
	version  string
	ciphers  string
	resume   bool
	curves   string
	cert     string
	key      string
	p12      string
	p12Pass  string
}

func (t *tlsFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&t.enable, "tls", false, "use TLS (implied by https:// URLs)")
	fl.BoolVarP(&t.insecure, "insecure", "k", false, "do not verify the server's certificate")
	fl.StringVar(&t.caFile, "cacert", "", "PEM file of CA certificates to verify the server with (default the system's CA pool)")
	fl.StringVar(&t.sni, "sni", "", "server name to send (SNI) and verify (default the URL's host)")
	fl.StringVar(&t.version, "tls-version", "", "pin the TLS version: 1.2 or 1.3 (default: negotiated, 1.2 at least)")
	fl.StringVar(&t.ciphers, "cipher", "", "TLS 1.2 cipher suites, comma-separated Go/IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (default Go's list)")
	fl.BoolVar(&t.resume, "tls-resume", false, "allow TLS session resumption (default: every handshake is full)")
	fl.StringVar(&t.cert, "cert", "", "client certificate (PEM, chain after it), e.g. client.pem, for a server that asks for one (mutual TLS); the file may hold the key too")
	fl.StringVar(&t.key, "key", "", "the client certificate's private key (PEM), e.g. client.key (default: read from --cert's file)")
	fl.StringVar(&t.p12, "cert-p12", "", "client certificate and key as a PKCS#12 bundle (.p12/.pfx), e.g. client.p12, instead of --cert/--key")
	fl.StringVar(&t.p12Pass, "cert-p12-password", "", "the --cert-p12 bundle's password (default empty; or LOADGEN_CERT_P12_PASSWORD, which keeps it out of ps)")
	fl.StringVar(&t.curves, "tls-curves", "", "key exchanges offered, in order (default "+protocol.FormatCurves(protocol.DefaultCurves())+"; add X25519MLKEM768 to offer post-quantum, as browsers do)")
}

// options builds the protocol's TLS options; an https:// target turns them
// on (loadgen/client), --tls does for any other.
func (t *tlsFlags) options() (protocol.TLS, error) {
	o := protocol.TLS{
		Enabled:     t.enable,
		Insecure:    t.insecure,
		CAFile:      t.caFile,
		ServerName:  t.sni,
		Resume:      t.resume,
		CertFile:    t.cert,
		KeyFile:     t.key,
		P12File:     t.p12,
		P12Password: t.p12Pass,
	}
	if t.version != "" {
		v, err := protocol.ParseTLSVersion(t.version)
		if err != nil {
			return o, fmt.Errorf("--tls-version: %w", err)
		}
		o.MinVersion, o.MaxVersion = v, v
	}
	if t.curves != "" {
		c, err := protocol.ParseCurves(t.curves)
		if err != nil {
			return o, fmt.Errorf("--tls-curves: %w", err)
		}
		o.Curves = c
	}
	if t.ciphers != "" {
		ids, err := protocol.ParseCiphers(t.ciphers)
		if err != nil {
			return o, fmt.Errorf("--cipher: %w", err)
		}
		o.Ciphers = ids
	}
	return o, nil
}
