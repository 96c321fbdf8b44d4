package httpbin

import (
	"bytes"

	"loadgen/internal/httpsyntax"
)

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
// split of the bytes into reads leads to the same answer: each line is
// judged once it is complete, and a line refused refuses the head.
func parseHead(b []byte, h *head) (n int, v verdict) {
	hosts := 0
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			// An incomplete line: too long already, or a CR inside it
			// (a line ends with CRLF), or more is needed.
			if cr := bytes.IndexByte(b[off:], '\r'); len(b) >= maxHead || (cr >= 0 && cr < len(b)-off-1) {
				return 0, foreign
			}
			return 0, needMore
		}
		line := b[off : off+i]
		first := off == 0
		off += i + 1
		if off > maxHead || len(line) == 0 || line[len(line)-1] != '\r' {
			return 0, foreign // too long, or a bare LF
		}
		line = line[:len(line)-1]
		switch {
		case first:
			if !h.requestLine(line) {
				return 0, foreign
			}
		case len(line) == 0: // the head's end
			if hosts != 1 {
				return 0, foreign
			}
			return off, parsed
		default:
			if !h.field(line, &hosts) {
				return 0, foreign
			}
		}
	}
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
	if !plainTarget(h.uri) {
		return false
	}
	if q := bytes.IndexByte(h.uri, '?'); q >= 0 {
		h.path = h.uri[:q]
	}
	return true
}

// plainTarget reports whether t is an absolute path fasthttp's normalization
// leaves as it is — no escapes to decode, no empty or dot segments to remove
// — and maybe a query of URI characters (its escapes are not decoded).
func plainTarget(u []byte) bool {
	if len(u) == 0 || u[0] != '/' {
		return false
	}
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c == '?':
			for _, c := range u[i+1:] {
				if !queryChars[c] {
					return false
				}
			}
			return true
		case !pathChars[c]:
			return false
		case c == '/' && i+1 < len(u) && (u[i+1] == '/' || u[i+1] == '.'):
			return false
		}
	}
	return true
}

// plainHost reports whether h is a name or IPv4 address (letters, digits,
// '-', '.', '_') and maybe a port, which fasthttp validates as the loop does
// and reads as nothing but a host (it routes by a URL made of the host and
// the target). IPv6 literals and the rest are fasthttp's to judge.
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

// Character classes, by byte: the path's (RFC 3986 pchar without escapes,
// and '/'), the query's, a token's (RFC 9110: a method or field name), a
// field value's (visible ASCII, space and tab).
var (
	pathChars  = charClass("/-._~!$&'()*+,;=:@")
	queryChars = charClass("/-._~!$&'()*+,;=:@?%")
	tokenChars = charClass("!#$%&'*+-.^_`|~")
	valueChars = func() (t [256]bool) {
		for c := 0x20; c < 0x7f; c++ {
			t[c] = true
		}
		t['\t'] = true
		return t
	}()
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

// field parses a header field line, "Name: value". It refuses what would
// make fasthttp answer otherwise than the loop: a body (Content-Length,
// Transfer-Encoding), Expect, Upgrade, a Connection other than close or
// keep-alive, a second Host or one fasthttp would not read as a plain
// host; a folded line (its name would start with a space).
func (h *head) field(line []byte, hosts *int) bool {
	colon := 0
	for colon < len(line) && tokenChars[line[colon]] {
		colon++
	}
	if colon == 0 || colon == len(line) || line[colon] != ':' || len(h.header) == maxHeaders {
		return false
	}
	name, value := line[:colon], httpsyntax.TrimOWS(line[colon+1:])
	for _, c := range value {
		if !valueChars[c] {
			return false
		}
	}
	switch len(name) {
	case 4:
		if equalFold(name, "Host") {
			if *hosts++; *hosts > 1 || !plainHost(value) {
				return false
			}
			h.host = value
		}
	case 10:
		if equalFold(name, "Connection") {
			switch {
			case equalFold(value, "close"):
				h.close = true
			case equalFold(value, "keep-alive"):
			default:
				return false
			}
		}
	case 13:
		if equalFold(name, HeaderHop) {
			return false // a hop of a chain (call.go): its answer says so
		}
	case 14, 17, 6, 7:
		if equalFold(name, "Content-Length") || equalFold(name, "Transfer-Encoding") ||
			equalFold(name, "Expect") || equalFold(name, "Upgrade") {
			return false
		}
	}
	h.header = append(h.header, kv{name, value})
	return true
}

// equalFold reports whether b is s, ignoring ASCII case.
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
