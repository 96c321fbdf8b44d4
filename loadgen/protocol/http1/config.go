// Package http1 is the HTTP/1.1 protocol: one keep-alive connection per Conn,
// one request in flight, the request bytes built once (at NewDialer) and
// written with one write, the response header parsed with fasthttp's parser
// and the body read and dropped. A Do on an established plain-HTTP
// connection allocates nothing.
//
// Outcome.Bytes counts what was read for the response (status line, headers,
// body; over TLS the decrypted bytes, as wrk counts), Outcome.Written the
// request's bytes.
package http1

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"loadgen/loadgen/protocol"
)

// Config is what an HTTP/1.1 run sends.
type Config struct {
	URL     string   // http://host[:port]/path?query or https://…
	Method  string   // default GET
	Headers []string // "Name: value", as given to -H; "Host: …" overrides the Host
	Body    []byte   // sent with Content-Length
	// TLS is on for https:// URLs, or for http:// ones with TLS.Enabled
	// (the default port is then 443 too). ALPN offers only http/1.1.
	TLS         protocol.TLS
	DialTimeout time.Duration // bounds TCP connect and TLS handshake; 0 means none
}

// Validate reports the first problem with the configuration, in words a user
// of the command line can act on.
func (c Config) Validate() error {
	_, err := c.target()
	return err
}

// target is a validated Config: where to connect and the request to send.
type target struct {
	addr     string // host:port to dial
	hostname string // the URL's host without port or brackets (SNI, verification)
	tls      bool
	head     bool   // HEAD: responses carry no body whatever their headers say
	req      []byte // the whole request: request line, headers, body
}

func (c Config) target() (target, error) {
	var t target
	if c.URL == "" {
		return t, errors.New("no URL given: want http://host[:port]/path or https://…")
	}
	if !strings.Contains(c.URL, "://") {
		return t, fmt.Errorf("URL %q has no scheme: want http://%s or https://…", c.URL, strings.TrimPrefix(c.URL, "//"))
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return t, fmt.Errorf("malformed URL %q: %v", c.URL, errors.Unwrap(err))
	}
	switch u.Scheme {
	case "http":
	case "https":
		t.tls = true
	default:
		return t, fmt.Errorf("URL %q: scheme %q is not HTTP/1.1: use http:// or https://", c.URL, u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return t, fmt.Errorf("URL %q has no host: want %s://host[:port]/path", c.URL, u.Scheme)
	}
	if u.User != nil {
		return t, fmt.Errorf("URL %q: credentials in the URL are not sent; use -H 'Authorization: …'", c.URL)
	}
	if c.TLS.Enabled {
		t.tls = true
	} else if !t.tls && tlsOptionsSet(c.TLS) {
		return t, fmt.Errorf("TLS options given for %q, which is plain HTTP: use --tls/https for TLS", c.URL)
	}
	t.hostname = u.Hostname()
	port := u.Port()
	if port == "" {
		port = "80"
		if t.tls {
			port = "443"
		}
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return t, fmt.Errorf("URL %q: port %q out of range 1-65535", c.URL, port)
	}
	t.addr = net.JoinHostPort(t.hostname, port)

	method := c.Method
	if method == "" {
		method = "GET"
	}
	if !isToken(method) {
		return t, fmt.Errorf("method %q is not a valid HTTP method", method)
	}
	t.head = method == "HEAD"

	host := u.Host // as wrk sends it: host[:port], IPv6 in brackets
	var hdrs []string
	userAgent := false
	for _, h := range c.Headers {
		name, value, err := parseHeader(h)
		if err != nil {
			return t, err
		}
		switch {
		case strings.EqualFold(name, "Host"):
			if value == "" {
				return t, fmt.Errorf("header %q: empty Host", h)
			}
			host = value
			continue
		case strings.EqualFold(name, "Content-Length"):
			if value != strconv.Itoa(len(c.Body)) {
				return t, fmt.Errorf("header %q disagrees with the body (%d bytes): leave Content-Length out, it is set from the body", h, len(c.Body))
			}
			continue
		case strings.EqualFold(name, "Transfer-Encoding"):
			return t, fmt.Errorf("header %q: the body is always sent with Content-Length; leave Transfer-Encoding out", h)
		case strings.EqualFold(name, "User-Agent"):
			userAgent = true
		}
		hdrs = append(hdrs, name+": "+value)
	}

	b := make([]byte, 0, 256+len(c.Body))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for _, h := range hdrs {
		b = append(b, h...)
		b = append(b, "\r\n"...)
	}
	if !userAgent {
		b = append(b, "User-Agent: loadgen\r\n"...)
	}
	if len(c.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(c.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, c.Body...)
	t.req = b
	return t, nil
}

// parseHeader splits "Name: value" and checks both halves.
func parseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q: want \"Name: value\"", h)
	}
	if !isToken(name) {
		return "", "", fmt.Errorf("header %q: %q is not a valid header name", h, name)
	}
	value = strings.Trim(value, " \t")
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return "", "", fmt.Errorf("header %q: the value holds a control character (%#x)", h, c)
		}
	}
	return name, value, nil
}

// isToken reports whether s is an RFC 9110 token (method, header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func tlsOptionsSet(t protocol.TLS) bool {
	return t.Insecure || t.CAFile != "" || t.ServerName != "" || t.MinVersion != 0 ||
		t.MaxVersion != 0 || len(t.Ciphers) > 0 || t.Resume
}
