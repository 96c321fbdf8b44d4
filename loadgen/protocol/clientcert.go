package protocol

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/crypto/pkcs12"
)

// ClientCert loads the client's certificate and key: --cert and --key
// (PEM; a --cert file holding the key too needs no --key), or --cert-p12
// with its password. Each error is one line that names the flag to fix.
func (t TLS) ClientCert() (tls.Certificate, error) {
	switch {
	case t.P12File != "" && (t.CertFile != "" || t.KeyFile != ""):
		return tls.Certificate{}, errors.New("--cert-p12 holds the certificate and its key: give it or --cert/--key, not both")
	case t.P12Password != "" && t.P12File == "":
		return tls.Certificate{}, errors.New("--cert-p12-password given without --cert-p12 FILE")
	case t.P12File != "":
		return loadP12(t.P12File, t.P12Password)
	case t.CertFile == "":
		return tls.Certificate{}, fmt.Errorf("--key %s given without --cert FILE: give the certificate the key belongs to", t.KeyFile)
	}
	certPEM, err := os.ReadFile(t.CertFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--cert: %w", err)
	}
	if !hasBlock(certPEM, "CERTIFICATE") {
		return tls.Certificate{}, fmt.Errorf("--cert %s: no PEM certificate found", t.CertFile)
	}
	keyPEM, keyFrom := certPEM, "--cert "+t.CertFile
	if t.KeyFile != "" {
		if keyPEM, err = os.ReadFile(t.KeyFile); err != nil {
			return tls.Certificate{}, fmt.Errorf("--key: %w", err)
		}
		keyFrom = "--key " + t.KeyFile
	} else if !hasKey(certPEM) {
		return tls.Certificate{}, fmt.Errorf("--cert %s holds no private key: give the key with --key FILE", t.CertFile)
	}
	if !hasKey(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("%s: no PEM private key found", keyFrom)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--cert %s with %s: %v", t.CertFile, keyFrom, err)
	}
	return cert, nil
}

// loadP12 reads a PKCS#12 bundle's key and certificates. x/crypto's
// decoder knows the legacy ciphers (3DES, RC2 with SHA-1) only, not the
// AES that OpenSSL 3 exports by default: that error says how to re-export.
func loadP12(file, password string) (tls.Certificate, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--cert-p12: %w", err)
	}
	blocks, err := pkcs12.ToPEM(data, password)
	var ni pkcs12.NotImplementedError
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return tls.Certificate{}, fmt.Errorf("--cert-p12 %s: wrong password (--cert-p12-password, or LOADGEN_CERT_P12_PASSWORD)", file)
	case errors.As(err, &ni):
		return tls.Certificate{}, fmt.Errorf("--cert-p12 %s: %v: export it with legacy encryption (openssl pkcs12 -export -legacy), or give PEM files with --cert and --key (openssl pkcs12 -in %s -nodes)", file, err, file)
	case err != nil:
		return tls.Certificate{}, fmt.Errorf("--cert-p12 %s: not a PKCS#12 bundle loadgen can read: %v", file, err)
	}
	var certs [][]byte
	var keyPEM []byte
	for _, b := range blocks {
		b.Headers = nil // friendlyName, localKeyId: not PEM that tls parses
		if b.Type == "CERTIFICATE" {
			certs = append(certs, pem.EncodeToMemory(b))
		} else {
			keyPEM = append(keyPEM, pem.EncodeToMemory(b)...)
		}
	}
	switch {
	case certs == nil:
		return tls.Certificate{}, fmt.Errorf("--cert-p12 %s holds no certificate", file)
	case keyPEM == nil:
		return tls.Certificate{}, fmt.Errorf("--cert-p12 %s holds no private key", file)
	}
	// The bundle's order is not the chain's: the leaf is the key's.
	for i := range certs {
		chain := slices.Concat(certs[i:i+1], certs[:i], certs[i+1:])
		if cert, err := tls.X509KeyPair(bytes.Join(chain, nil), keyPEM); err == nil {
			return cert, nil
		}
	}
	return tls.Certificate{}, fmt.Errorf("--cert-p12 %s: no certificate in it is its private key's", file)
}

func hasBlock(data []byte, typ string) bool {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if b.Type == typ {
			return true
		}
	}
}

func hasKey(data []byte) bool {
	return hasBlock(data, "PRIVATE KEY") || hasBlock(data, "RSA PRIVATE KEY") || hasBlock(data, "EC PRIVATE KEY")
}
