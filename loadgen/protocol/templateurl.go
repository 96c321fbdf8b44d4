package protocol

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The URL and headers of a request with fields, checked the same way by
// every protocol that renders them.

// ParseURL parses a URL whose path and query may hold fields, and
// returns its request target as text (a template's when it has
// fields). Its checks read the URL rendered with placeholder values.
func ParseURL(raw string, feed *Feed) (*url.URL, string, error) {
	if !HasTemplate(raw) {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, "", fmt.Errorf("malformed URL %q: %v", raw, errors.Unwrap(err))
		}
		return u, u.RequestURI(), nil
	}
	tp, err := ParseTemplate(raw, feed)
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
	ut, err := ParseTemplate(uri, feed)
	if err != nil {
		return nil, "", fmt.Errorf("URL %q: %w", raw, err)
	}
	if strings.IndexFunc(ut.Literal(), notURIByte) >= 0 {
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

// CheckHeaderFields checks the fields of header h (name: value), and the
// feed's values that stand in them: a header's value holds no control
// character; its name and a Host do not vary.
func CheckHeaderFields(h, name, value string, feed *Feed) error {
	if HasTemplate(name) {
		return fmt.Errorf("header %q: a header's name cannot vary, only its value", h)
	}
	if strings.EqualFold(name, "Host") {
		return fmt.Errorf("header %q: the Host cannot vary (one run is one connection pool)", h)
	}
	tp, err := ParseTemplate(value, feed)
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
