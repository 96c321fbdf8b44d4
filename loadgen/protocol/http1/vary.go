package http1

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"loadgen/loadgen/protocol"
)

// Requests that vary: a request with fields ({{seq}}, {{uuid}} …:
// protocol.ParseTemplate) is compiled once, at NewDialer, into its head
// (request line and headers) and its body, and rendered per request into
// a buffer its connection keeps: the buffer grows to the largest request
// rendered, then nothing more is allocated.

// varying is a request with fields, compiled.
type varying struct {
	head *protocol.Template // request line and headers, each line ended
	body *protocol.Template // nil without a body
	clen bool               // a Content-Length is sent (a body, or POST, PUT, PATCH)
	uses protocol.Uses
}

// clRoom is the room rendering keeps for "Content-Length: N\r\n\r\n"
// before it knows N: the body is rendered after it, then moved back.
const clRoom = len("Content-Length: ") + 20 + len("\r\n\r\n")

// render renders one request into b's room (b[:0]) with the next values
// of vars, and returns it.
func (v *varying) render(b []byte, vars *protocol.Vars) []byte {
	d := vars.Draw(v.uses)
	b = v.head.Append(b[:0], &d)
	if !v.clen {
		return append(b, "\r\n"...)
	}
	h := len(b)
	b = append(b, make([]byte, clRoom)...) // no allocation once b has room
	if v.body != nil {
		b = v.body.Append(b, &d)
	}
	n := len(b) - h - clRoom
	cl := append(b[h:h], "Content-Length: "...)
	cl = strconv.AppendInt(cl, int64(n), 10)
	cl = append(cl, "\r\n\r\n"...)
	copy(b[h+len(cl):], b[h+clRoom:])
	return b[:h+len(cl)+n]
}

// compile makes the varying request of head (request line and header
// lines, as built) and body.
func compile(head string, body []byte, bodyFields, clen bool, feed *protocol.Feed) (*varying, error) {
	ht, err := protocol.ParseTemplate(head, feed)
	if err != nil {
		return nil, err // each piece was checked: not reached
	}
	v := &varying{head: ht, clen: clen, uses: ht.Uses()}
	if len(body) > 0 {
		if bodyFields {
			if v.body, err = protocol.ParseTemplate(string(body), feed); err != nil {
				return nil, fmt.Errorf("the body: %w", err)
			}
		} else {
			v.body = protocol.LiteralTemplate(string(body))
		}
		v.uses |= v.body.Uses()
	}
	return v, nil
}

// parseURL parses a URL whose path and query may hold fields, and
// returns its request target as text (a template's when it has
// fields). Its checks read the URL rendered with placeholder values.
func parseURL(raw string, feed *protocol.Feed) (*url.URL, string, error) {
	if !protocol.HasTemplate(raw) {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, "", fmt.Errorf("malformed URL %q: %v", raw, errors.Unwrap(err))
		}
		return u, u.RequestURI(), nil
	}
	tp, err := protocol.ParseTemplate(raw, feed)
	if err != nil {
		return nil, "", fmt.Errorf("URL %q: %w", raw, err)
	}
	u, err := url.Parse(tp.Sample(feed))
	if err != nil {
		return nil, "", fmt.Errorf("malformed URL %q: %v", raw, errors.Unwrap(err))
	}
	_, rest, _ := strings.Cut(raw, "://")
	a := strings.IndexAny(rest, "/?#")
	if a < 0 || strings.Index(rest, "{{") < a {
		return nil, "", fmt.Errorf("URL %q: a field in the host: the requests of a run share one connection pool (one scheme, host and port); fields go in the path and query", raw)
	}
	uri, _, _ := strings.Cut(rest[a:], "#")
	if uri == "" || uri[0] == '?' {
		uri = "/" + uri
	}
	ut, err := protocol.ParseTemplate(uri, feed)
	if err != nil {
		return nil, "", fmt.Errorf("URL %q: %w", raw, err)
	}
	if s := ut.Sample(feed); strings.IndexFunc(s, notURIByte) >= 0 {
		return nil, "", fmt.Errorf("URL %q holds a space or a control character: percent-encode it (%%20 for a space)", raw)
	}
	for _, col := range ut.Columns() {
		if err := feed.CheckColumn(col, "a URL", func(s string) bool { return strings.IndexFunc(s, notURIByte) < 0 && !strings.Contains(s, "#") }); err != nil {
			return nil, "", fmt.Errorf("%w: percent-encode it in the file", err)
		}
	}
	return u, uri, nil
}

func notURIByte(r rune) bool { return r <= ' ' || r == 0x7f }

// checkHeaderFields checks a header value's fields, and the feed's values
// that stand in them: a header's value holds no control character.
func checkHeaderFields(h, name, value string, feed *protocol.Feed) error {
	if protocol.HasTemplate(name) {
		return fmt.Errorf("header %q: a header's name cannot vary, only its value", h)
	}
	if strings.EqualFold(name, "Host") {
		return fmt.Errorf("header %q: the Host cannot vary (one run is one connection pool)", h)
	}
	tp, err := protocol.ParseTemplate(value, feed)
	if err != nil {
		return fmt.Errorf("header %q: %w", h, err)
	}
	for _, col := range tp.Columns() {
		if err := feed.CheckColumn(col, "a header's value", func(s string) bool {
			return !strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
		}); err != nil {
			return fmt.Errorf("header %q: %w", h, err)
		}
	}
	return nil
}
