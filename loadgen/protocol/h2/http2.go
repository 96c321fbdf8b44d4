// Package http2 is loadgen's HTTP/2 protocol, like h2load: h2 over TLS
// (ALPN "h2") for https:// URLs and h2c with prior knowledge for http://
// URLs. Config.Streams (-m) streams share each connection, so -c connections
// × -m streams are c×m Conns over c TCP connections.
//
// The client is a lean one: a thin layer over h2conn, loadgen's one HTTP/2
// connection layer (the gRPC client's too), which owns the connections (no
// pool opens one behind the engine's back); a request allocates nothing.
// The Conns of a connection take turns reading it: the first Do that
// waits becomes the reader, dispatches every stream's frames and hands the
// role on when its own response is complete; the others park. Requests
// issued together are written together (one write for all streams that
// are ready), much as h2load's event loop does.
//
// Outcome.Bytes is exact: the wire size of the stream's HEADERS,
// CONTINUATION and DATA frames, frame headers and padding included
// (connection-level frames and TLS overhead are not counted). Outcome.Written
// counts the request's frames the same way.
//
// Outcomes:
//   - status ≥ 400, or with Config.OKStatus a status not in it: Status;
//   - deadline passed: Timeout; the stream is reset (RST_STREAM CANCEL) and
//     the connection kept, so Done only if the connection broke too;
//   - the run's context ended: Timeout, not Done;
//   - RST_STREAM from the server: Read (Protocol for PROTOCOL_ERROR), not
//     Done; a malformed response on a stream (RFC 9113 §8.1.1: DATA before
//     HEADERS, no :status…) or a bad WINDOW_UPDATE: the client resets the
//     stream, Protocol, not Done;
//   - connection lost: Read or Write, Done; the server breaking the protocol
//     (bad frame, HPACK error, PUSH_PROMISE…): Protocol, Done;
//   - GOAWAY: streams the server will not process end with Read, Done and
//     Unsent (the engine sends them again on a new connection),
//     the others complete normally (Done once the GOAWAY has been read), and
//     a Do on the connection afterwards (or once its stream IDs are used
//     up) returns Write, Done and Unsent, with nothing sent;
//   - aborted by Close: Read, Done.
package h2

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
	"loadgen/loadgen/protocol/h2wire"
)

// Config is one HTTP/2 load target.
type Config struct {
	URL         string   // https:// for h2 over TLS, http:// for h2c (needs Cleartext)
	Method      string   // default GET
	Headers     []string // "Name: value"; "Host: x" sets :authority
	Body        []byte   // sent with every request; content-length is added
	TLS         protocol.TLS
	Cleartext   bool          // h2c with prior knowledge, for http:// URLs
	Streams     int           // -m: concurrent streams per connection, default 1
	DialTimeout time.Duration // TCP connect + TLS handshake + SETTINGS exchange; default 10s
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
	// Fields ({{seq}} …: protocol.ParseTemplate) may stand in a URL's path
	// and query, in header values and in a body that is text: those
	// headers are sent as literals rendered per request (content-length
	// too, with a body that varies), the rest of the header block built
	// once; the body is rendered into a buffer its stream keeps.
	Feed *protocol.Feed
}

// Request is one request of a mix (Config.Requests).
type Request struct {
	Method  string // default GET
	URL     string // on Config.URL's scheme, host and port
	Headers []string
	Body    []byte
}

const (
	defaultDialTimeout = 10 * time.Second
	maxStreamsPerConn  = 1 << 16
	userAgent          = "loadgen"
)

// connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2); they
// are dropped, so one header list serves HTTP/1.1 and HTTP/2 runs alike.
var droppedHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true,
}

// Validate checks the configuration; its errors are one line each.
func (c Config) Validate() error {
	_, err := c.request()
	return err
}

// target is a validated Config.
type target struct {
	addr        string // host:port to dial
	host        string // for SNI
	tls         bool
	fields      []h2wire.Field
	body        []byte
	lists       [][]h2wire.Field     // a mix's requests' fields (Config.Requests); nil without
	vary        [][]h2conn.VaryField // the fields that vary, by request (one without a mix); nil without
	renders     []*render            // what each request renders (one without a mix); nil without fields
	bodies      [][]byte             // and bodies
	streams     int
	dialTimeout time.Duration
	ok          protocol.StatusSet // the statuses of a success
}

func (c Config) request() (*target, error) {
	if c.URL == "" {
		return nil, errors.New("http2: no URL")
	}
	u, uri, err := parseURL(c.URL, c.Feed)
	if err != nil {
		return nil, err
	}
	t := &target{body: c.Body, streams: c.Streams, dialTimeout: c.DialTimeout, ok: c.OKStatus}
	port := u.Port()
	switch u.Scheme {
	case "https":
		if c.Cleartext {
			return nil, fmt.Errorf("http2: h2c (cleartext) needs an http:// URL, not %s", c.URL)
		}
		t.tls = true
		if port == "" {
			port = "443"
		}
	case "http":
		if !c.Cleartext {
			return nil, fmt.Errorf("http2: %s is cleartext: enable h2c (HTTP/2 with prior knowledge), or use https:// for h2 over TLS", c.URL)
		}
		if c.TLS.Enabled {
			return nil, fmt.Errorf("http2: TLS options given for the cleartext URL %s: use https://", c.URL)
		}
		if port == "" {
			port = "80"
		}
	default:
		return nil, fmt.Errorf("http2: URL %q: scheme must be https (h2) or http (h2c)", c.URL)
	}
	t.host = u.Hostname()
	if t.host == "" {
		return nil, fmt.Errorf("http2: URL %q has no host", c.URL)
	}
	t.addr = net.JoinHostPort(t.host, port)
	switch {
	case c.Streams < 0:
		return nil, fmt.Errorf("http2: streams per connection (-m) is %d: must be at least 1", c.Streams)
	case c.Streams == 0:
		t.streams = 1
	case c.Streams > maxStreamsPerConn:
		return nil, fmt.Errorf("http2: streams per connection (-m) is %d: at most %d", c.Streams, maxStreamsPerConn)
	}
	switch {
	case c.DialTimeout < 0:
		return nil, fmt.Errorf("http2: dial timeout %v is negative", c.DialTimeout)
	case c.DialTimeout == 0:
		t.dialTimeout = defaultDialTimeout
	}

	if len(c.Requests) == 0 {
		var vary []h2conn.VaryField
		var r *render
		t.fields, vary, r, err = fields(u, uri, c.Method, c.Headers, c.Body, c.Feed)
		if vary != nil {
			t.vary, t.renders = [][]h2conn.VaryField{vary}, []*render{r}
		}
		return t, err
	}
	varies := false
	for i, r := range c.Requests {
		ru, ruri, err := parseURL(r.URL, c.Feed)
		if err != nil {
			return nil, fmt.Errorf("http2: request %d: %s", i+1, strings.TrimPrefix(err.Error(), "http2: "))
		}
		rport := ru.Port()
		if rport == "" {
			rport = map[string]string{"http": "80", "https": "443"}[ru.Scheme]
		}
		if ru.Scheme != u.Scheme || !strings.EqualFold(ru.Hostname(), t.host) || rport != port {
			return nil, fmt.Errorf("http2: request %d: %s is not on %s://%s: the requests of a mix share one connection pool (one scheme, host and port)", i+1, r.URL, u.Scheme, t.addr)
		}
		if ru.User != nil {
			return nil, fmt.Errorf("http2: request %d: URL %q: credentials in the URL are not sent; give an Authorization header", i+1, r.URL)
		}
		fs, vary, rr, err := fields(ru, ruri, r.Method, append(slices.Clip(c.Headers), r.Headers...), r.Body, c.Feed)
		if err != nil {
			return nil, fmt.Errorf("http2: request %d (%s %s): %s", i+1, r.Method, r.URL, strings.TrimPrefix(err.Error(), "http2: "))
		}
		t.lists, t.bodies, t.vary, t.renders = append(t.lists, fs), append(t.bodies, r.Body), append(t.vary, vary), append(t.renders, rr)
		varies = varies || vary != nil
	}
	if !varies {
		t.vary, t.renders = nil, nil
	}
	t.fields, t.body = t.lists[0], t.bodies[0]
	return t, nil
}

// parseURL parses a URL, and one with fields in its path and query
// (protocol.ParseURL): uri is then its request target as written.
func parseURL(raw string, feed *protocol.Feed) (*url.URL, string, error) {
	if protocol.HasTemplate(raw) {
		u, uri, err := protocol.ParseURL(raw, feed)
		if err != nil {
			return nil, "", fmt.Errorf("http2: %w", err)
		}
		return u, uri, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("http2: bad URL %q: %v", raw, errors.Unwrap(err))
	}
	return u, "", nil
}

// fields is the header list of one request to u (uri its request
// target as written), and the fields of it whose values vary, apart,
// with what the request renders (nil when nothing varies).
func fields(u *url.URL, uri, method string, headers []string, body []byte, feed *protocol.Feed) ([]h2wire.Field, []h2conn.VaryField, *render, error) {
	if method == "" {
		method = "GET"
	}
	if !isToken(method) {
		return nil, nil, nil, fmt.Errorf("http2: bad method %q", method)
	}
	if method == "CONNECT" {
		return nil, nil, nil, errors.New("http2: CONNECT is not supported")
	}
	var vary []h2conn.VaryField
	var bodyT *protocol.Template
	if protocol.BodyHasTemplate(body) {
		var err error
		if bodyT, err = protocol.ParseTemplate(string(body), feed); err != nil {
			return nil, nil, nil, fmt.Errorf("http2: the body: %w", err)
		}
	}
	if protocol.HasTemplate(uri) {
		tp, err := protocol.ParseTemplate(uri, feed)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("http2: %w", err)
		}
		vary = append(vary, h2conn.VaryField{Name: ":path", Value: tp})
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	authority := u.Host
	scheme := u.Scheme

	var extra []h2wire.Field
	hasUA, hasLength := false, false
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if ok && protocol.HasTemplate(h) {
			if err := protocol.CheckHeaderFields(h, name, value, feed); err != nil {
				return nil, nil, nil, fmt.Errorf("http2: %w", err)
			}
		}
		switch {
		case !ok:
			return nil, nil, nil, fmt.Errorf("http2: header %q: want \"Name: value\"", h)
		case !isToken(name):
			return nil, nil, nil, fmt.Errorf("http2: header %q: bad name", h)
		case strings.ContainsAny(value, "\r\n\x00"):
			return nil, nil, nil, fmt.Errorf("http2: header %q: value holds CR, LF or NUL", h)
		case droppedHeaders[name]:
			continue
		case name == "te" && !strings.EqualFold(value, "trailers"):
			continue // the only TE value HTTP/2 allows
		case name == "host":
			authority = value
			continue
		case name == "user-agent":
			hasUA = true
		case name == "content-length":
			hasLength = true
		}
		if protocol.HasTemplate(value) {
			tp, _ := protocol.ParseTemplate(value, feed) // checked above
			vary = append(vary, h2conn.VaryField{Name: name, Value: tp})
			continue
		}
		extra = append(extra, h2wire.Field{Name: name, Value: value})
	}
	fs := []h2wire.Field{
		{Name: ":method", Value: method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
	}
	if vary == nil || vary[0].Name != ":path" {
		fs = append(fs, h2wire.Field{Name: ":path", Value: path})
	}
	if !hasUA {
		fs = append(fs, h2wire.Field{Name: "user-agent", Value: userAgent})
	}
	switch {
	case bodyT != nil && hasLength:
		return nil, nil, nil, errors.New("http2: a content-length header with a body that varies: leave it out, it is set from each rendered body")
	case bodyT != nil:
		vary = append(vary, h2conn.VaryField{Name: "content-length"}) // the rendered body's
	case len(body) > 0 && !hasLength:
		fs = append(fs, h2wire.Field{Name: "content-length", Value: fmt.Sprint(len(body))})
	}
	if vary == nil {
		return append(fs, extra...), nil, nil, nil
	}
	r := &render{body: bodyT}
	for _, f := range vary {
		if f.Value != nil {
			r.uses |= f.Value.Uses()
		}
	}
	if bodyT != nil {
		r.uses |= bodyT.Uses()
	}
	return append(fs, extra...), vary, r, nil
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

// render is what a request with fields renders per request: its values
// (protocol.Draw), and its body when that has fields. Its header fields
// are rendered by h2conn (Config.Vary) with the same values.
type render struct {
	uses protocol.Uses
	body *protocol.Template // nil: the body does not vary
}

// draw takes one request's values and renders its body into buf (when it
// has fields; else body is the request's own): what the stream sends.
func (r *render) draw(vars *protocol.Vars, buf, body []byte) (protocol.Draw, []byte, []byte) {
	d := vars.Draw(r.uses)
	if r.body != nil {
		buf = r.body.Append(buf[:0], &d)
		body = buf
	}
	return d, buf, body
}
