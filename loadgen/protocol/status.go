package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// StatusSet is the HTTP statuses an answer may have and succeed
// (--ok-status, as fortio's and k6's users ask for): any other is an
// error of class Status. Its zero value is wrk's and h2load's rule, every
// status below 400. It is a small value with no pointers: a protocol
// keeps a copy and asks it per answer without allocating.
type StatusSet struct {
	bits [(maxStatusCode + 63) / 64]uint64
	set  bool
}

// maxStatusCode bounds the statuses a set holds: HTTP's are three digits.
const maxStatusCode = 1000

// ParseStatusSet reads a list of statuses, classes and ranges: "2xx",
// "200,204", "200-299,404".
func ParseStatusSet(s string) (StatusSet, error) {
	var set StatusSet
	if strings.TrimSpace(s) == "" {
		return set, fmt.Errorf("--ok-status: empty: give statuses, classes or ranges, e.g. 2xx, 200,204 or 200-299,404")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, err := statusRange(part)
		if err != nil {
			return StatusSet{}, fmt.Errorf("--ok-status %q: %s: %v (want e.g. 2xx, 200,204 or 200-299,404)", s, part, err)
		}
		for c := lo; c <= hi; c++ {
			set.bits[c/64] |= 1 << (c % 64)
		}
	}
	set.set = true
	return set, nil
}

// statusRange reads one element of a StatusSet's list.
func statusRange(p string) (int, int, error) {
	code := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || len(s) != 3 || n < 100 || n > 599 {
			return 0, fmt.Errorf("not an HTTP status (100 to 599)")
		}
		return n, nil
	}
	if len(p) == 3 && (strings.HasSuffix(p, "xx") || strings.HasSuffix(p, "XX")) {
		c := int(p[0] - '0')
		if c < 1 || c > 5 {
			return 0, 0, fmt.Errorf("not a status class (1xx to 5xx)")
		}
		return c * 100, c*100 + 99, nil
	}
	if a, b, ok := strings.Cut(p, "-"); ok {
		lo, err := code(strings.TrimSpace(a))
		if err != nil {
			return 0, 0, err
		}
		hi, err := code(strings.TrimSpace(b))
		if err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("the range ends before it begins")
		}
		return lo, hi, nil
	}
	c, err := code(p)
	return c, c, err
}

// Failed tells whether an answer with this status is an error; a nil set
// is the default rule.
func (s *StatusSet) Failed(status int) bool {
	if s == nil || !s.set {
		return status >= 400
	}
	return status < 0 || status >= maxStatusCode || s.bits[status/64]&(1<<(status%64)) == 0
}

// IsSet tells whether the set was given (not the default rule).
func (s StatusSet) IsSet() bool { return s.set }

// String is the set as ParseStatusSet reads it, in ranges: "200-299,404";
// "" for the default rule.
func (s StatusSet) String() string {
	if !s.set {
		return ""
	}
	var parts []string
	for c := 0; c < maxStatusCode; c++ {
		if s.Failed(c) {
			continue
		}
		end := c
		for end+1 < maxStatusCode && !s.Failed(end+1) {
			end++
		}
		if end == c {
			parts = append(parts, strconv.Itoa(c))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c, end))
		}
		c = end
	}
	return strings.Join(parts, ",")
}
