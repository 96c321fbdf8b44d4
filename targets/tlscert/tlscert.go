// Package tlscert makes self-signed certificates for the targets, so a TLS
// target needs no files: RSA-2048 (what NGINX's "SSL TPS" figures use) or
// ECDSA P-256.
package tlscert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"time"
)

// KeyType names the key algorithm of a generated certificate.
type KeyType string

const (
	RSA2048   KeyType = "rsa"
	ECDSAP256 KeyType = "ecdsa"
)

// ParseKeyType accepts "rsa" (RSA-2048) or "ecdsa" (ECDSA P-256).
func ParseKeyType(s string) (KeyType, error) {
	switch s {
	case "rsa", "rsa2048", "rsa-2048", "":
		return RSA2048, nil
	case "ecdsa", "p256", "ecdsa-p256":
		return ECDSAP256, nil
	}
	return "", fmt.Errorf("unknown key type %q: use rsa (RSA-2048) or ecdsa (P-256)", s)
}

// Describe names the key as a report says it: RSA-2048, ECDSA P-256.
func (kt KeyType) Describe() string {
	if kt == ECDSAP256 {
		return "ECDSA P-256"
	}
	return "RSA-2048"
}

// Cert is a self-signed certificate valid for localhost, 127.0.0.1, ::1 and
// the given extra names, with its PEM forms (for clients' --cacert).
type Cert struct {
	TLS     tls.Certificate
	CertPEM []byte
	KeyPEM  []byte
	Leaf    *x509.Certificate
}

// New makes a self-signed certificate of the given key type.
func New(kt KeyType, names ...string) (*Cert, error) {
	key, err := newKey(kt)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "loadgen target", Organization: []string{"loadgen"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if n != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return create(tmpl, nil, key)
}

// NewCA makes a self-signed root certificate that signs others (Issue),
// as a mesh's CA does: subject O=org, valid ten years.
func NewCA(kt KeyType, org string) (*Cert, error) {
	key, err := newKey(kt)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{Organization: []string{org}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return create(tmpl, nil, key)
}

// Issue makes a certificate signed by c (made by NewCA) named by the given
// URI SANs, as Istio issues workload certificates (an empty subject,
// spiffe://… URIs), and DNS names if any, for both ends of mutual TLS,
// valid one day.
func (c *Cert) Issue(kt KeyType, uris []*url.URL, dnsNames ...string) (*Cert, error) {
	if c.Leaf == nil || !c.Leaf.IsCA {
		return nil, fmt.Errorf("issue: the signing certificate is not a CA")
	}
	key, err := newKey(kt)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		URIs:                  uris,
		DNSNames:              dnsNames,
	}
	return create(tmpl, c, key)
}

func newKey(kt KeyType) (crypto.Signer, error) {
	var key crypto.Signer
	var err error
	switch kt {
	case RSA2048, "":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case ECDSAP256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("unknown key type %q", kt)
	}
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

// create signs tmpl with parent's key (self-signed when parent is nil),
// with a random serial number.
func create(tmpl *x509.Certificate, parent *Cert, key crypto.Signer) (*Cert, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	signer, parentCert := key, tmpl
	if parent != nil {
		var ok bool
		if signer, ok = parent.TLS.PrivateKey.(crypto.Signer); !ok {
			return nil, fmt.Errorf("issue: the CA has no private key")
		}
		parentCert = parent.Leaf
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &Cert{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Leaf:    leaf,
	}
	c.TLS = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return c, nil
}

// Load reads a certificate and key from PEM files (--cert/--key).
func Load(certFile, keyFile string) (*Cert, error) {
	kp, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load --cert/--key: %w", err)
	}
	return &Cert{TLS: kp, Leaf: kp.Leaf}, nil
}

// Pool returns a cert pool holding this certificate, for in-process clients.
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	if c.Leaf != nil {
		p.AddCert(c.Leaf)
	}
	return p
}
