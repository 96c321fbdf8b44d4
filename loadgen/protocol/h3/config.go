// Package h3 is loadgen's HTTP/3 protocol (-p h3): requests over QUIC
// with quic-go's HTTP/3 client, for https:// URLs. Config.Streams (-m)
// Conns share each QUIC connection, as -p h2's streams share a TCP
// connection: -c connections × -m streams are c×m Conns over c QUIC
// connections. Each QUIC connection has its own UDP socket.
//
// A QUIC connection always begins with a TLS 1.3 handshake: the Dialer
// counts the connections whose handshake completed (Opened), which the
// engine reports as the run's connections. 0-RTT is off unless
// Config.ZeroRTT: a connection is dialed with quic.Dial, never DialEarly,
// so no request leaves before the handshake completed, and a resumed
// session (--tls-resume) still waits for it. With ZeroRTT, sessions are
// resumed and a connection whose session allows it sends its GET or HEAD
// requests in 0-RTT, before the handshake completed; a server that
// rejects 0-RTT has those requests sent again (Unsent), and 0-RTT is not
// tried again in the run.
//
// quic-go's client allocates per request (a request, a stream, its
// goroutines): h3 runs on the engine's goroutine driver, and its
// allocation is not zero per request as HTTP/1.1's and HTTP/2's are.
// Outcome.Bytes counts the response body only: the HTTP/3 frames are
// not visible through quic-go's client. Outcome.Written counts the
// request body.
//
// Outcomes:
//   - status ≥ 400, or with Config.OKStatus a status not in it: Status;
//   - deadline passed: Timeout, the stream cancelled and the connection
//     kept; the run's context ended: Timeout;
//   - the server reset the stream: Read, the connection kept;
//   - the connection closed or lost (idle timeout, the server's
//     CONNECTION_CLOSE, a stateless reset): Read and Done; and Unsent when
//     the request's header had not gone out (the connection was closed or
//     going away, GOAWAY, before it): the engine sends it again;
//   - aborted by Close: Read, Done.
package h3

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go/http3"

	"loadgen/loadgen/protocol"
)

// Config is one HTTP/3 load target.
type Config struct {
	URL         string   // https://host:port/path; QUIC goes to the UDP port of that number
	Method      string   // default GET
	Headers     []string // "Name: value"; "Host: x" sets :authority
	Body        []byte   // sent with every request; content-length is set
	TLS         protocol.TLS
	Streams     int           // -m: concurrent requests per QUIC connection, default 1
	DialTimeout time.Duration // QUIC and TLS handshake; default 10s
	// OKStatus are the statuses of a successful answer (--ok-status); the
	// zero value: every status below 400.
	OKStatus protocol.StatusSet
	// ZeroRTT sends requests in 0-RTT on resumed sessions (--0rtt): GET
	// and HEAD only, which a replay cannot harm.
	ZeroRTT bool
}

const (
	defaultDialTimeout = 10 * time.Second
	maxStreamsPerConn  = 1 << 16
	userAgent          = "loadgen"
)

// Validate checks the configuration; its errors are one line each.
func (c Config) Validate() error {
	_, err := c.target()
	return err
}

// target is a validated Config.
type target struct {
	addr        string // host:port to dial (UDP)
	host        string // for SNI
	req         *http.Request
	body        []byte
	streams     int
	dialTimeout time.Duration
	ok          protocol.StatusSet
	early       *http.Request // req sent in 0-RTT; nil without ZeroRTT
}

func (c Config) target() (*target, error) {
	if c.URL == "" {
		return nil, errors.New("http3: no URL")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("http3: bad URL %q: %v", c.URL, errors.Unwrap(err))
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("http3: URL %q: HTTP/3 runs over QUIC, which is always TLS: use an https:// URL", c.URL)
	}
	t := &target{body: c.Body, streams: c.Streams, dialTimeout: c.DialTimeout, ok: c.OKStatus}
	t.host = u.Hostname()
	if t.host == "" {
		return nil, fmt.Errorf("http3: URL %q has no host", c.URL)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("http3: URL %q: port %q is not a number from 0 to 65535", c.URL, port)
	}
	if u.User != nil {
		return nil, fmt.Errorf("http3: URL %q: credentials in the URL are not sent; give an Authorization header", c.URL)
	}
	t.addr = net.JoinHostPort(t.host, port)
	switch {
	case c.Streams < 0:
		return nil, fmt.Errorf("http3: streams per connection (-m) is %d: must be at least 1", c.Streams)
	case c.Streams == 0:
		t.streams = 1
	case c.Streams > maxStreamsPerConn:
		return nil, fmt.Errorf("http3: streams per connection (-m) is %d: at most %d", c.Streams, maxStreamsPerConn)
	}
	switch {
	case c.DialTimeout < 0:
		return nil, fmt.Errorf("http3: dial timeout %v is negative", c.DialTimeout)
	case c.DialTimeout == 0:
		t.dialTimeout = defaultDialTimeout
	}
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	if !isToken(method) {
		return nil, fmt.Errorf("http3: bad method %q", method)
	}
	if method == http.MethodConnect {
		return nil, errors.New("http3: CONNECT is not supported")
	}
	req := &http.Request{
		Method: method, URL: u, Proto: "HTTP/3.0", ProtoMajor: 3,
		Header: http.Header{}, Host: u.Host, ContentLength: int64(len(c.Body)),
	}
	for _, h := range c.Headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, fmt.Errorf("http3: header %q: want \"Name: value\"", h)
		case !isToken(name):
			return nil, fmt.Errorf("http3: header %q: bad name", h)
		case strings.ContainsAny(value, "\r\n\x00"):
			return nil, fmt.Errorf("http3: header %q: value holds CR, LF or NUL", h)
		}
		switch strings.ToLower(name) {
		case "host":
			req.Host = value
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length":
			// connection-specific (RFC 9114 §4.2), or set from the body
		default:
			req.Header.Add(name, value)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	t.req = req
	if c.ZeroRTT {
		early := *req
		switch method {
		case http.MethodGet:
			early.Method = http3.MethodGet0RTT
		case http.MethodHead:
			early.Method = http3.MethodHead0RTT
		default:
			return nil, fmt.Errorf("http3: 0-RTT sends GET and HEAD only (a request in 0-RTT can be replayed), not %s", method)
		}
		t.early = &early
	}
	return t, nil
}

// isToken reports whether s is an RFC 9110 token (method, header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
