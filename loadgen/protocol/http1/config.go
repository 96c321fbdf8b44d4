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
	"slices"
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
	// Requests, when set, are a request mix: what is sent, each request
	// picked by the engine (protocol.Picker). Their URLs share URL's
	// scheme, host and port (one connection pool); Headers go with every
	// one of them, before its own; Method and Body are then unused. A Conn
	// sends the first until another is picked.
	Requests []Request
	// OKStatus are the statuses of a successful answer (--ok-status); the
	// zero value: every status below 400.
	OKStatus protocol.StatusSet
	// Feed is the CSV rows {{row.COLUMN}} takes (--feed); nil without.
	// Fields ({{seq}} …: protocol.ParseTemplate) may stand in a URL's
	// path and query, in header values and in a body that is text; a
	// request with none is built once, one with some is compiled once and
	// rendered per request.
	Feed *protocol.Feed
}

// Request is one request of a mix (Config.Requests).
type Request struct {
	Method  string // default GET
	URL     string // on Config.URL's scheme, host and port
	Headers []string
	Body    []byte
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
	head     bool     // HEAD: responses carry no body whatever their headers say
	req      []byte   // the whole request: request line, headers, body
	vary     *varying // the request compiled, when it has fields (req is nil then)
	mix      *list    // Config.Requests, built; nil without
}

// list is the requests of a mix, built: each one's bytes (or, with
// fields, its compiled form) and whether it is a HEAD, by its index.
type list struct {
	reqs  [][]byte
	varys []*varying
	heads []bool
}

func (c Config) target() (target, error) {
	var t target
	if c.URL == "" {
		return t, errors.New("no URL given: want http://host[:port]/path or https://…")
	}
	if !strings.Contains(c.URL, "://") {
		return t, fmt.Errorf("URL %q has no scheme: want http://%s or https://…", c.URL, strings.TrimPrefix(c.URL, "//"))
	}
	u, uri, err := protocol.ParseURL(c.URL, c.Feed)
	if err != nil {
		return t, err
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
	if len(c.Requests) > 0 {
		return t, c.mix(&t, u)
	}
	t.req, t.vary, t.head, err = build(uri, u.Host, c.Method, c.Headers, c.Body, c.Feed)
	return t, err
}

// mix builds Config.Requests into t: every URL on u's scheme, host and
// port.
func (c Config) mix(t *target, u *url.URL) error {
	t.mix = &list{}
	for i, r := range c.Requests {
		ru, uri, err := protocol.ParseURL(r.URL, c.Feed)
		if err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		if ru.Scheme != u.Scheme || !sameHostPort(ru, u) {
			return fmt.Errorf("request %d: %s is not on %s://%s: the requests of a mix share one connection pool (one scheme, host and port)", i+1, r.URL, u.Scheme, t.addr)
		}
		if ru.User != nil {
			return fmt.Errorf("request %d: URL %q: credentials in the URL are not sent; give an Authorization header", i+1, r.URL)
		}
		req, vary, head, err := build(uri, ru.Host, r.Method, append(slices.Clip(c.Headers), r.Headers...), r.Body, c.Feed)
		if err != nil {
			return fmt.Errorf("request %d (%s %s): %w", i+1, r.Method, r.URL, err)
		}
		t.mix.reqs, t.mix.varys, t.mix.heads = append(t.mix.reqs, req), append(t.mix.varys, vary), append(t.mix.heads, head)
	}
	t.req, t.vary, t.head = t.mix.reqs[0], t.mix.varys[0], t.mix.heads[0]
	return nil
}

// sameHostPort reports whether a and b name one host and port, a scheme's
// default port written or not.
func sameHostPort(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// build makes the bytes of one request to uri (its request target) on
// host, and tells a HEAD. A request with fields ({{seq}} …) in its URI,
// a header's value or its body is compiled instead (vary; req is nil).
func build(uri, host, method string, headers []string, body []byte, feed *protocol.Feed) (req []byte, vary *varying, head bool, err error) {
	if method == "" {
		method = "GET"
	}
	if !protocol.IsToken(method) {
		return nil, nil, false, fmt.Errorf("method %q is not a valid HTTP method", method)
	}
	head = method == "HEAD"

	var hdrs []string
	userAgent, fields := false, protocol.HasTemplate(uri)
	for _, h := range headers {
		name, value, err := parseHeader(h)
		if err != nil {
			return nil, nil, false, err
		}
		if protocol.HasTemplate(value) {
			if err := protocol.CheckHeaderFields(h, name, value, feed); err != nil {
				return nil, nil, false, err
			}
			fields = true
		}
		switch {
		case strings.EqualFold(name, "Host"):
			if value == "" {
				return nil, nil, false, fmt.Errorf("header %q: empty Host", h)
			}
			host = value
			continue
		case strings.EqualFold(name, "Content-Length"):
			if value != strconv.Itoa(len(body)) {
				return nil, nil, false, fmt.Errorf("header %q disagrees with the body (%d bytes): leave Content-Length out, it is set from the body", h, len(body))
			}
			continue
		case strings.EqualFold(name, "Transfer-Encoding"):
			return nil, nil, false, fmt.Errorf("header %q: the body is always sent with Content-Length; leave Transfer-Encoding out", h)
		case strings.EqualFold(name, "User-Agent"):
			userAgent = true
		}
		hdrs = append(hdrs, name+": "+value)
	}

	b := make([]byte, 0, 256+len(body))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
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
	clen := len(body) > 0 || method == "POST" || method == "PUT" || method == "PATCH"
	bodyFields := protocol.BodyHasTemplate(body)
	if fields || bodyFields {
		vary, err = compile(string(b), body, bodyFields, clen, feed)
		return nil, vary, head, err
	}
	if clen {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	return b, nil, head, nil
}

// parseHeader splits "Name: value" and checks both halves.
func parseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q: want \"Name: value\"", h)
	}
	if !protocol.IsToken(name) {
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

func tlsOptionsSet(t protocol.TLS) bool {
	return t.Insecure || t.CAFile != "" || t.ServerName != "" || t.MinVersion != 0 ||
		t.MaxVersion != 0 || len(t.Ciphers) > 0 || t.Resume || t.ClientCertSet()
}
