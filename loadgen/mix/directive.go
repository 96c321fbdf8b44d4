package mix

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// comment reads a comment: a # name=… weight=… line gives the next
// request its name and weight; any other is ignored.
func (p *parser) comment(n int, text string) error {
	if !strings.HasPrefix(text, "name=") && !strings.HasPrefix(text, "weight=") {
		return nil
	}
	if p.given != nil {
		return p.errf(n, "a second name or weight line (line %d gave one) before a request: give both on one line, # name=… weight=…", p.givenAt)
	}
	d := &directive{}
	seen := map[string]bool{}
	for rest := text; rest != ""; rest = strings.TrimLeft(rest, " \t") {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || (key != "name" && key != "weight") {
			return p.errf(n, "want name=NAME and weight=N on a name line, got %s", quote(rest))
		}
		if seen[key] {
			return p.errf(n, "%s given twice", key)
		}
		seen[key] = true
		value, tail, err := cutValue(after)
		if err != nil {
			return p.errf(n, "%s: %v", key, err)
		}
		rest = tail
		switch key {
		case "name":
			if value == "" || len(value) > MaxName {
				return p.errf(n, "name=%s: a name has 1 to %d bytes", quote(value), MaxName)
			}
			d.name = value
		case "weight":
			w, err := strconv.Atoi(value)
			if err != nil || w < 1 || w > MaxWeight {
				return p.errf(n, "weight=%s: want a whole number from 1 to %d (a request never sent is left out or commented out)", value, MaxWeight)
			}
			d.weight = w
		}
	}
	p.given, p.givenAt = d, n
	return nil
}

// cutValue reads a value, quoted ("a name") or up to the next space,
// and returns the rest of the line.
func cutValue(s string) (value, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			return s[:i], s[i:], nil
		}
		return s, "", nil
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", errors.New("a quote that does not end")
	}
	value, rest = s[1:1+end], s[2+end:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", fmt.Errorf("want a space after %s", quote(s[:2+end]))
	}
	return value, rest, nil
}

// validText reports whether s is UTF-8 without control characters but tabs (a
// CR before the LF is the line's end).
func validText(s string) bool {
	s = strings.TrimSuffix(s, "\r")
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r < ' ' && r != '\t') || r == 0x7f {
			return false
		}
	}
	return true
}

// quote quotes a line for an error, cut at 80 bytes.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strconv.Quote(s)
}
