package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
)

// TLS holds the client's TLS options, shared by every protocol that speaks
// TLS. The zero value means plaintext.
type TLS struct {
	Enabled    bool
	Insecure   bool     // skip certificate verification (off by default)
	CAFile     string   // PEM file of CAs to trust instead of the system pool
	ServerName string   // SNI and the name verified; default: the target's host
	MinVersion uint16   // tls.VersionTLS12 …; 0 means Go's default
	MaxVersion uint16   // 0 means Go's default
	Ciphers    []uint16 // TLS 1.2 cipher suites; nil means Go's default
	Resume     bool     // allow session resumption (otherwise every handshake is full)
	// Curves are the key exchanges offered, in order. Nil means
	// DefaultCurves: classical ECDHE, as OpenSSL 3.0 clients (wrk, h2load)
	// offer, so the client does not spend a post-quantum key generation on
	// every handshake with a server that cannot use it.
	Curves []tls.CurveID
	// CertFile and KeyFile are the client's certificate (chain) and its
	// private key, PEM, for a server that asks for one (mutual TLS); a
	// CertFile that holds the key too needs no KeyFile.
	CertFile, KeyFile string
	// P12File is a PKCS#12 bundle of the client's certificate and key, in
	// place of CertFile and KeyFile; P12Password opens it.
	P12File, P12Password string
}

// ClientCertSet says whether a client certificate was asked for.
func (t TLS) ClientCertSet() bool {
	return t.CertFile != "" || t.KeyFile != "" || t.P12File != "" || t.P12Password != ""
}

// DefaultCurves are offered when TLS.Curves is nil (a new slice each call:
// no shared mutable state).
func DefaultCurves() []tls.CurveID { return []tls.CurveID{tls.X25519, tls.CurveP256} }

// Config builds a fresh *tls.Config for a protocol. host is the target's
// host (used for SNI when ServerName is empty); nextProtos is the ALPN list.
// It returns nil, nil when TLS is not enabled.
func (t TLS) Config(host string, nextProtos ...string) (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	c := &tls.Config{
		InsecureSkipVerify: t.Insecure,
		ServerName:         t.ServerName,
		MinVersion:         t.MinVersion,
		MaxVersion:         t.MaxVersion,
		CipherSuites:       t.Ciphers,
		NextProtos:         nextProtos,
		CurvePreferences:   slices.Clone(t.Curves),
	}
	if c.CurvePreferences == nil {
		c.CurvePreferences = DefaultCurves()
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	if t.Resume {
		c.ClientSessionCache = tls.NewLRUClientSessionCache(1024)
	} else {
		c.SessionTicketsDisabled = true
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate found", t.CAFile)
		}
		c.RootCAs = pool
	}
	if t.ClientCertSet() {
		cert, err := t.ClientCert()
		if err != nil {
			return nil, err
		}
		// Sent to any server that asks, as curl and openssl s_client do:
		// Go's own choice sends none when the server's list of CAs does
		// not name the certificate's issuer, which reads as no --cert.
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return c, nil
}

// ParseTLSVersion parses "1.0", "1.1", "1.2" or "1.3".
func ParseTLSVersion(s string) (uint16, error) {
	switch strings.TrimPrefix(strings.ToLower(s), "tls") {
	case "1.0", "10":
		return tls.VersionTLS10, nil
	case "1.1", "11":
		return tls.VersionTLS11, nil
	case "1.2", "12":
		return tls.VersionTLS12, nil
	case "1.3", "13":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q: use 1.2 or 1.3", s)
}

// ParseCiphers parses a comma-separated list of cipher suite names as Go and
// IANA spell them (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256). TLS 1.3 suites are
// not configurable and are rejected.
func ParseCiphers(s string) ([]uint16, error) {
	byName := map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		if !slices.Equal(c.SupportedVersions, []uint16{tls.VersionTLS13}) {
			byName[c.Name] = c.ID
		}
	}
	for _, c := range tls.InsecureCipherSuites() {
		byName[c.Name] = c.ID
	}
	var ids []uint16
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		id, ok := byName[strings.ToUpper(name)]
		if !ok {
			return nil, fmt.Errorf("unknown cipher suite %q (TLS 1.3 suites cannot be chosen; see `openssl ciphers -stdname` for names)", name)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("--cipher: empty list")
	}
	return ids, nil
}

// ExplainTLS adds what to do to a certificate verification error; other
// errors are returned unchanged.
func ExplainTLS(err error) error {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown), errors.As(err, &verify) && errors.As(verify.Err, &unknown):
		return fmt.Errorf("%w (trust the target's CA with --cacert FILE, or skip verification with --insecure)", err)
	case errors.As(err, &hostname):
		return fmt.Errorf("%w (set the name to verify with --sni NAME, or skip verification with --insecure)", err)
	case errors.As(err, &invalid):
		return fmt.Errorf("%w (use a valid certificate, or skip verification with --insecure)", err)
	}
	return explainClientCert(err)
}

// explainClientCert adds what to do to a server's alert about the client's
// certificate: one it requires and was not sent (TLS 1.3's
// certificate_required), or one it refused.
func explainClientCert(err error) error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return err
	}
	switch op.Err.Error() {
	case "tls: certificate required":
		return &clientCertError{err: err, advice: "the server requires a client certificate: give one with --cert FILE --key FILE, or --cert-p12 FILE"}
	case "tls: bad certificate", "tls: unknown certificate authority", "tls: unsupported certificate",
		"tls: certificate unknown", "tls: certificate revoked", "tls: certificate expired", "tls: access denied":
		return &clientCertError{err: err, advice: "the server refused the client certificate, or wanted one: give --cert FILE --key FILE with a certificate from a CA it trusts"}
	}
	return err
}

// ErrClientCertAdvised marks an error that already says what to do about
// the client's certificate (a server that required one, or refused the
// one sent): errors.Is(err, ErrClientCertAdvised) tells a caller to add
// no hint of its own about it.
var ErrClientCertAdvised = errors.New("the error says what to do about the client certificate")

// clientCertError is a server's alert about the client's certificate,
// with what to do (explainClientCert).
type clientCertError struct {
	err    error
	advice string
}

func (e *clientCertError) Error() string        { return e.err.Error() + " (" + e.advice + ")" }
func (e *clientCertError) Unwrap() error        { return e.err }
func (e *clientCertError) Is(target error) bool { return target == ErrClientCertAdvised }

// curveNames are the key exchanges --tls-curves names, as ParseCurves
// reads them (case-insensitive; P-256 too) and FormatCurves writes them.
var curveNames = []struct {
	name string
	id   tls.CurveID
}{
	{"X25519", tls.X25519}, {"P256", tls.CurveP256}, {"P384", tls.CurveP384},
	{"P521", tls.CurveP521}, {"X25519MLKEM768", tls.X25519MLKEM768},
}

// FormatCurves writes key exchanges as ParseCurves reads them:
// "X25519,P256" (one without a name as crypto/tls calls it).
func FormatCurves(ids []tls.CurveID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
		for _, c := range curveNames {
			if c.id == id {
				s[i] = c.name
			}
		}
	}
	return strings.Join(s, ",")
}

// ParseCurves parses a comma-separated list of key exchanges: X25519,
// P256, P384, P521, X25519MLKEM768 (case-insensitive).
func ParseCurves(s string) ([]tls.CurveID, error) {
	names := map[string]tls.CurveID{}
	var known []string
	for _, c := range curveNames {
		names[strings.ToLower(c.name)] = c.id
		if strings.HasPrefix(c.name, "P") {
			names["p-"+c.name[1:]] = c.id
		}
		known = append(known, c.name)
	}
	var ids []tls.CurveID
	for _, name := range strings.Split(s, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		id, ok := names[name]
		if !ok {
			return nil, fmt.Errorf("unknown key exchange %q: use %s or %s", name, strings.Join(known[:len(known)-1], ", "), known[len(known)-1])
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("--tls-curves: empty list")
	}
	return ids, nil
}

// FlightConn is the transport of a TLS client that writes and reads in
// turn from one goroutine (an HTTP/1.1 connection): what crypto/tls writes
// waits for its next read. The handshake's last flight, which no read
// follows in TLS 1.3 (the client's Finished), then leaves in one write
// and one segment with the first request: a system call and a packet less
// per new connection, for the server a wake-up less. From the first read
// past the handshake (Handshaken) on, writes go straight through.
type FlightConn struct {
	net.Conn
	held   []byte
	shaken bool // the handshake is over
	direct bool // and what it left was sent
	// WriteErr is the error of writing what was held: the bytes did not
	// leave, whatever the read that sent them reports.
	WriteErr error
}

func (c *FlightConn) Write(b []byte) (int, error) {
	if c.direct {
		return c.Conn.Write(b)
	}
	c.held = append(c.held, b...)
	return len(b), nil
}

func (c *FlightConn) Read(b []byte) (int, error) {
	if !c.direct {
		if len(c.held) > 0 {
			_, err := c.Conn.Write(c.held)
			c.held = c.held[:0]
			if err != nil {
				c.WriteErr = err
				return 0, err
			}
		}
		if c.shaken {
			c.direct, c.held = true, nil
		}
	}
	return c.Conn.Read(b)
}

// Handshaken tells that the handshake is over: the next read sends what it
// left with what was written since, and writes go straight through after.
func (c *FlightConn) Handshaken() { c.shaken = true }
