package httpbin

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// request is what the echo endpoints (/get, /post, /anything, /delay,
// /headers) report, filled by an adapter. Its byte slices point into the
// server's own buffers (fasthttp) or into arena (net/http); they are valid
// until the response is written. Requests are pooled per Server.
type request struct {
	method []byte
	https  bool
	host   []byte
	uri    []byte // as received: path?query, or an absolute URL
	body   []byte
	remote []byte // client address without port
	header []kv   // in any order, repeated names allowed

	args  []kv   // decoded query
	form  []kv   // decoded urlencoded body
	arena []byte // copies (net/http) and decoded args and form
	data  []byte // body buffer of the net/http adapter
	out   []byte // the response being built
}

type kv struct{ k, v []byte }

// reset empties r for reuse, dropping buffers grown past keepCap.
func (r *request) reset() {
	const keepCap = 1 << 20
	*r = request{
		header: r.header[:0],
		args:   r.args[:0],
		form:   r.form[:0],
		arena:  r.arena[:0],
		data:   r.data[:0],
		out:    r.out[:0],
	}
	if cap(r.arena) > keepCap {
		r.arena = nil
	}
	if cap(r.data) > keepCap {
		r.data = nil
	}
	if cap(r.out) > keepCap {
		r.out = nil
	}
}

// keep copies s into the arena and returns the copy. Earlier copies stay
// valid when the arena grows: they keep the old array alive.
func (r *request) keep(s string) []byte {
	n := len(r.arena)
	r.arena = append(r.arena, s...)
	return r.arena[n:len(r.arena):len(r.arena)]
}

// fields is the set of keys an echo document has.
type fields uint16

const (
	fArgs fields = 1 << iota
	fData
	fFiles
	fForm
	fHeaders
	fJSON
	fMethod
	fOrigin
	fURL
)

// The documents of httpbin's endpoints: the same keys, in its (sorted) order.
const (
	getFields      = fArgs | fHeaders | fOrigin | fURL
	postFields     = fArgs | fData | fFiles | fForm | fHeaders | fJSON | fOrigin | fURL
	anythingFields = fArgs | fData | fFiles | fForm | fHeaders | fJSON | fMethod | fOrigin | fURL
	delayFields    = fArgs | fData | fFiles | fForm | fHeaders | fOrigin | fURL
	headersFields  = fHeaders
)

const formType = "application/x-www-form-urlencoded"

// appendEcho appends r as an httpbin JSON document with the keys f to dst.
func appendEcho(dst []byte, r *request, f fields) []byte {
	r.prepare(f)
	dst = append(dst, "{\n"...)
	sep := false
	key := func(name string) {
		if sep {
			dst = append(dst, ",\n"...)
		}
		sep = true
		dst = append(dst, `  "`...)
		dst = append(dst, name...)
		dst = append(dst, `": `...)
	}
	if f&fArgs != 0 {
		key("args")
		dst = appendObject(dst, r.args, false)
	}
	if f&fData != 0 {
		key("data")
		if r.isForm() {
			dst = append(dst, `""`...)
		} else {
			dst = appendString(dst, r.body)
		}
	}
	if f&fFiles != 0 {
		key("files")
		dst = append(dst, "{}"...)
	}
	if f&fForm != 0 {
		key("form")
		dst = appendObject(dst, r.form, false)
	}
	if f&fHeaders != 0 {
		key("headers")
		dst = appendObject(dst, r.header, true)
	}
	if f&fJSON != 0 {
		key("json")
		if len(r.body) > 0 && !r.isForm() && json.Valid(r.body) {
			dst = append(dst, bytes.TrimSpace(r.body)...)
		} else {
			dst = append(dst, "null"...)
		}
	}
	if f&fMethod != 0 {
		key("method")
		dst = appendString(dst, r.method)
	}
	if f&fOrigin != 0 {
		key("origin")
		if xff := r.headerValue("X-Forwarded-For"); xff != nil {
			dst = appendString(dst, xff)
		} else {
			dst = appendString(dst, r.remote)
		}
	}
	if f&fURL != 0 {
		key("url")
		dst = appendURL(dst, r)
	}
	return append(dst, "\n}\n"...)
}

// prepare decodes what the keys f need and sorts the lists by name.
func (r *request) prepare(f fields) {
	if f&fArgs != 0 {
		r.args, r.arena = decodeQuery(r.args[:0], r.arena, r.query())
		slices.SortStableFunc(r.args, compareKeys)
	}
	if f&fForm != 0 && r.isForm() {
		r.form, r.arena = decodeQuery(r.form[:0], r.arena, r.body)
		slices.SortStableFunc(r.form, compareKeys)
	}
	if f&fHeaders != 0 {
		slices.SortStableFunc(r.header, compareKeys)
	}
}

func compareKeys(a, b kv) int { return bytes.Compare(a.k, b.k) }

func (r *request) isForm() bool {
	ct := r.headerValue("Content-Type")
	if len(ct) < len(formType) {
		return false
	}
	for i := 0; i < len(formType); i++ {
		c := ct[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != formType[i] {
			return false
		}
	}
	return true
}

// headerValue is the first value of the header name (canonical form), or nil.
func (r *request) headerValue(name string) []byte {
	for _, h := range r.header {
		if string(h.k) == name {
			return h.v
		}
	}
	return nil
}

// query is the raw query of the request URI.
func (r *request) query() []byte {
	u := r.uri
	if i := bytes.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	if i := bytes.IndexByte(u, '?'); i >= 0 {
		return u[i+1:]
	}
	return nil
}

// appendURL appends the full URL of r as a JSON string.
func appendURL(dst []byte, r *request) []byte {
	if hasPrefix(r.uri, "http://") || hasPrefix(r.uri, "https://") {
		return appendString(dst, r.uri) // absolute form, as a proxy sends it
	}
	dst = append(dst, '"')
	if r.https {
		dst = append(dst, "https://"...)
	} else {
		dst = append(dst, "http://"...)
	}
	dst = appendEscaped(dst, r.host)
	dst = appendEscaped(dst, r.uri)
	return append(dst, '"')
}

// appendObject appends a sorted list as a JSON object. Repeated names become
// one array (args, form) or one comma-joined string (headers), as in httpbin.
func appendObject(dst []byte, list []kv, join bool) []byte {
	if len(list) == 0 {
		return append(dst, "{}"...)
	}
	dst = append(dst, "{"...)
	for i := 0; i < len(list); {
		j := i + 1
		for j < len(list) && bytes.Equal(list[j].k, list[i].k) {
			j++
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n    "...)
		dst = appendString(dst, list[i].k)
		dst = append(dst, ": "...)
		switch {
		case j == i+1:
			dst = appendString(dst, list[i].v)
		case join:
			dst = append(dst, '"')
			for m := i; m < j; m++ {
				if m > i {
					dst = append(dst, ',')
				}
				dst = appendEscaped(dst, list[m].v)
			}
			dst = append(dst, '"')
		default:
			dst = append(dst, '[')
			for m := i; m < j; m++ {
				if m > i {
					dst = append(dst, ", "...)
				}
				dst = appendString(dst, list[m].v)
			}
			dst = append(dst, ']')
		}
		i = j
	}
	return append(dst, "\n  }"...)
}

// appendString appends s as a quoted JSON string.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped appends s escaped for a JSON string; bytes that are not
// UTF-8 become U+FFFD.
func appendEscaped(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, `\ufffd`...)
			}
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// decodeQuery appends the pairs of an urlencoded string ("a=1&b=x+y") to
// list, decoded into arena. A malformed escape is kept as it is.
func decodeQuery(list []kv, arena, raw []byte) ([]kv, []byte) {
	for len(raw) > 0 {
		var part []byte
		if i := bytes.IndexByte(raw, '&'); i >= 0 {
			part, raw = raw[:i], raw[i+1:]
		} else {
			part, raw = raw, nil
		}
		if len(part) == 0 {
			continue
		}
		k, v := part, []byte(nil)
		if i := bytes.IndexByte(part, '='); i >= 0 {
			k, v = part[:i], part[i+1:]
		}
		n := len(arena)
		arena = unescape(arena, k)
		m := len(arena)
		arena = unescape(arena, v)
		list = append(list, kv{arena[n:m:m], arena[m:len(arena):len(arena)]})
	}
	return list, arena
}

// unescape appends s with %XX and '+' decoded.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			dst = append(dst, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			dst = append(dst, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
