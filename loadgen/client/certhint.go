package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"regexp"
	"strings"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/netns"
)

// CertHint says, after a run over TLS that failed, whether the server
// wants a client certificate that the run did not give, or refuses the one
// it gave (t), and what to do; "" when the server does not ask for one or
// takes it. A TLS 1.3 server refuses after the client's handshake is
// over, so the run's connections opened and its requests failed on read:
// the hint finds out with one handshake of its own (bounded by ctx and two
// seconds), from the run's network namespace (netnsName; "" for this
// one), reading the server's verdict.
func CertHint(ctx context.Context, target string, t protocol.TLS, netnsName string) string {
	if !t.Enabled {
		return ""
	}
	var cert *tls.Certificate
	if t.ClientCertSet() {
		c, err := t.ClientCert()
		if err != nil {
			return ""
		}
		cert = &c
	}
	addr, name, ok := tlsAddr(target)
	if !ok {
		return ""
	}
	if t.ServerName != "" {
		name = t.ServerName
	}
	ctx, cancel := context.WithTimeout(ctx, hintTimeout)
	defer cancel()
	asked := false
	conf := &tls.Config{InsecureSkipVerify: true, ServerName: name, NextProtos: []string{"h2", "http/1.1"}, MinVersion: t.MinVersion, MaxVersion: t.MaxVersion,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked = true
			if cert != nil {
				return cert, nil
			}
			return &tls.Certificate{}, nil // none: as the run did
		}}
	raw, err := dialFrom(ctx, netnsName, addr)
	if err != nil {
		return ""
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	c := tls.Client(raw, conf)
	refusedHTTP := ""
	err = c.HandshakeContext(ctx)
	if !asked {
		return "" // the server's CertificateRequest is part of the handshake
	}
	if err == nil {
		// TLS 1.3: the verdict comes after the handshake, as an alert in
		// place of the first bytes: an HTTP/2 server's SETTINGS, or the
		// answer to an HTTP/1.1 request, which nginx makes a 400 ("No
		// required SSL certificate was sent", "The SSL certificate
		// error").
		if c.ConnectionState().NegotiatedProtocol != "h2" {
			_, err = c.Write([]byte("GET / HTTP/1.1\r\nHost: " + name + "\r\nUser-Agent: loadgen\r\nConnection: close\r\n\r\n"))
		}
		if err == nil {
			buf := make([]byte, 1024)
			var n int
			n, err = io.ReadAtLeast(c, buf, 1)
			if bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 400")) {
				if m := nginxTitle.FindSubmatch(buf[:n]); m != nil {
					refusedHTTP = "HTTP " + string(m[1])
				}
			}
		}
	}
	if refusedHTTP != "" {
		err = &net.OpError{Op: "remote error", Err: errors.New(refusedHTTP)}
	}
	var op *net.OpError
	refused := errors.As(err, &op) && op.Op == "remote error"
	switch {
	case cert != nil && refused:
		return "the server refused the client certificate (" + op.Err.Error() +
			"): give one (--cert and --key, or --cert-p12) issued by a CA the server trusts, for client authentication."
	case cert != nil:
		return ""
	case refused:
		return "the server requires a client certificate (mutual TLS) and refused the connection without one (" +
			op.Err.Error() + "): give one with --cert FILE --key FILE, or --cert-p12 FILE."
	}
	return "the server asked for a client certificate (mutual TLS) in the TLS handshake and none was given: if it requires one, give it with --cert FILE --key FILE, or --cert-p12 FILE."
}

// tlsAddr is the host:port a TLS target is dialed at and the name its
// handshake sends: an https:// URL, or host:port (grpc with --tls).
func tlsAddr(target string) (addr, name string, ok bool) {
	if strings.Contains(target, "://") {
		u, err := TargetURL(target)
		if err != nil || u.Host == "" {
			return "", "", false
		}
		addr = u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "443")
		}
		return addr, u.Hostname(), true
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return "", "", false
	}
	return target, host, true
}

// nginxTitle is the title of nginx's page for a request whose client
// certificate is missing or wrong: "400 No required SSL certificate was
// sent", "400 The SSL certificate error".
var nginxTitle = regexp.MustCompile(`<title>(400 [^<]*SSL certificate[^<]*)</title>`)

// dialFrom connects to addr over TCP from network namespace ns ("": this
// one).
func dialFrom(ctx context.Context, ns, addr string) (net.Conn, error) {
	var d net.Dialer
	if ns == "" {
		return d.DialContext(ctx, "tcp", addr)
	}
	h, err := netns.Open(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var c net.Conn
	err = h.Do(func() error {
		var err error
		c, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}
