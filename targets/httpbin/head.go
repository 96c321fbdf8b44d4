package httpbin

import "bytes"

// The event loop's request parser: a strict subset of HTTP/1.1, fed the
// bytes a connection sent so far. What it accepts the loop answers itself;
// anything else — another method, another version, a body, a path fasthttp
// would rewrite, an odd header — is foreign, and the connection goes to
// fasthttp with its bytes, which then answers exactly as it always has.

// verdict is what parseHead makes of the bytes so far.
type verdict uint8

const (
	needMore verdict = iota // no complete head yet, nothing foreign so far
	parsed                  // a head the loop answers; no body follows it
	foreign                 // for fasthttp, from this request on
)

// Bounds of what the loop parses; beyond them fasthttp decides (431 for
// headers over its 16 KiB buffer, for one).
const (
	maxHead    = 8 << 10
	maxHeaders = 64
)

// head is a parsed request head: slices of the bytes parsed.
type head struct {
	method []byte // GET or HEAD
	uri    []byte // the request target: origin form, as sent
	path   []byte // uri without its query; fasthttp would not change it
	host   []byte
	isHead bool
	close  bool // Connection: close
	header []kv // every field, as sent (names not canonicalized)
}

// parseHead parses the request at the start of b into h. parsed: the head
// is b[:n]. The verdict of a prefix of b is needMore or that of b, so any
// split of the bytes into reads leads to the same answer.
func parseHead(b []byte, h *head) (n int, v verdict) {
	end := bytes.Index(b, crlfcrlf)
	if end < 0 {
		if len(b) >= maxHead || hasBareLF(b) {
			return 0, foreign
		}
		if i := bytes.Index(b, crlf); i >= 0 && !h.requestLine(b[:i]) {
			return 0, foreign // the request line is complete: no need to wait for the rest
		}
		return 0, needMore
	}
	n = end + len(crlfcrlf)
	if n > maxHead {
		return 0, foreign
	}
	i := bytes.Index(b, crlf)
	if !h.requestLine(b[:i]) || !h.fields(b[i+len(crlf):n]) {
		return 0, foreign
	}
	return n, parsed
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// hasBareLF: a line ends without CR, or a CR is followed by anything but
// LF. Both are for fasthttp's leniency to judge.
func hasBareLF(b []byte) bool {
	for i, c := range b {
		switch {
		case c == '\n' && (i == 0 || b[i-1] != '\r'):
			return true
		case c == '\r' && i+1 < len(b) && b[i+1] != '\n':
			return true
		}
	}
	return false
}

// requestLine parses "GET /path?query HTTP/1.1".
func (h *head) requestLine(line []byte) bool {
	*h = head{header: h.header[:0]}
	switch {
	case hasPrefix(line, "GET "):
		h.method, line = line[:3], line[4:]
	case hasPrefix(line, "HEAD "):
		h.method, line, h.isHead = line[:4], line[5:], true
	default:
		return false
	}
	const proto = " HTTP/1.1"
	if len(line) <= len(proto) || string(line[len(line)-len(proto):]) != proto {
		return false
	}
	h.uri = line[:len(line)-len(proto)]
	h.path = h.uri
	q := bytes.IndexByte(h.uri, '?')
	if q >= 0 {
		h.path = h.uri[:q]
		if !plainQuery(h.uri[q+1:]) {
			return false
		}
	}
	return plainPath(h.path)
}

// plainPath: an absolute path fasthttp's normalization leaves as it is —
// no escapes to decode, no empty or dot segments to remove.
func plainPath(p []byte) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !isPathChar(c) {
			return false
		}
		if c == '/' && i+1 < len(p) && (p[i+1] == '/' || p[i+1] == '.') {
			return false
		}
	}
	return true
}

// plainHost: a name or IPv4 address (letters, digits, '-', '.', '_') and
// maybe a port, which fasthttp validates as the loop does and reads as
// nothing but a host (it routes by a URL made of the host and the target).
// IPv6 literals and the rest are fasthttp's to judge.
func plainHost(h []byte) bool {
	name, port := h, []byte(nil)
	if i := bytes.IndexByte(h, ':'); i >= 0 {
		name, port = h[:i], h[i+1:]
		if len(port) == 0 || len(port) > 5 {
			return false
		}
	}
	if len(name) == 0 || !isAlnum(name[0]) {
		return false
	}
	for _, c := range name {
		if !isAlnum(c) && c != '-' && c != '.' && c != '_' {
			return false
		}
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// plainQuery: a query of URI characters only (escapes left undecoded).
func plainQuery(q []byte) bool {
	for _, c := range q {
		if !isPathChar(c) && c != '?' && c != '%' {
			return false
		}
	}
	return true
}

// isPathChar: RFC 3986 pchar without pct-encoded, or '/'.
func isPathChar(c byte) bool { return pathChars[c] }

// Character classes, by byte.
var (
	pathChars  = charClass("/-._~!$&'()*+,;=:@")
	tokenChars = charClass("!#$%&'*+-.^_`|~")
)

// charClass is the letters, the digits and the bytes of more.
func charClass(more string) (t [256]bool) {
	for c := range t {
		t[c] = isAlnum(byte(c))
	}
	for i := 0; i < len(more); i++ {
		t[more[i]] = true
	}
	return t
}

// fields parses the header fields, each "Name: value\r\n" (the head's
// last CRLF included). It refuses what would make fasthttp answer
// otherwise than the loop: a body (Content-Length, Transfer-Encoding),
// Expect, Upgrade, a Connection other than close or keep-alive, no Host or
// two, a folded line.
func (h *head) fields(b []byte) bool {
	hosts := 0
	for len(b) > len(crlf) {
		i := bytes.Index(b, crlf)
		line := b[:i]
		b = b[i+len(crlf):]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || len(h.header) == maxHeaders {
			return false
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		if !isToken(name) || !isFieldValue(value) {
			return false
		}
		switch {
		case equalFold(name, "Host"):
			if hosts++; hosts > 1 || !plainHost(value) {
				return false
			}
			h.host = value
		case equalFold(name, "Connection"):
			switch {
			case equalFold(value, "close"):
				h.close = true
			case equalFold(value, "keep-alive"):
			default:
				return false
			}
		case equalFold(name, "Content-Length"), equalFold(name, "Transfer-Encoding"),
			equalFold(name, "Expect"), equalFold(name, "Upgrade"):
			return false
		}
		h.header = append(h.header, kv{name, value})
	}
	return hosts == 1
}

// equalFold: b is s, ignoring ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// trimOWS trims spaces and tabs around a field value.
func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// isToken: RFC 9110 token, as a method or field name.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenChars[c] {
			return false
		}
	}
	return true
}

// isFieldValue: visible ASCII, spaces and tabs.
func isFieldValue(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}
