package httpbin

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The path parameters of /bytes/{n}, /status/{code} and /delay/{d}. Each
// parser is a pure function of its text and cap; its error is the 400 text.

// parseBytes reads n of /bytes/{n}: decimal digits only, 0..max. It does
// not allocate unless it fails.
func parseBytes(p []byte, max int) (int, error) {
	n, ok := parseUint(p, max)
	if !ok {
		return 0, fmt.Errorf("n must be 0..%d", max)
	}
	return n, nil
}

// parseStatus reads code of /status/{code}: 200..599. Interim 1xx codes are
// refused: an HTTP/1.1 client would wait for a final answer that never comes.
func parseStatus(p []byte) (int, error) {
	code, ok := parseUint(p, 999)
	if !ok || code < 200 || code > 599 {
		return 0, errors.New("code must be 200..599 (1xx are interim answers, not a response)")
	}
	return code, nil
}

// parseUint reads 1 to 10 decimal digits (leading zeros allowed) as a value
// of at most max.
func parseUint(p []byte, max int) (int, bool) {
	if len(p) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > max {
			return 0, false
		}
	}
	return n, true
}

// parseDelay reads d of /delay/{d}: a Go duration ("10ms", "1.5s") or, as
// httpbin has it, plain seconds ("2", "0.5"); 0..max.
func parseDelay(p []byte, max time.Duration) (time.Duration, error) {
	d, ok := delayValue(string(p), max)
	if !ok {
		return 0, fmt.Errorf("d must be a duration (10ms, 1.5s) or seconds (2, 0.5) from 0 to %v", max)
	}
	return d, nil
}

func delayValue(s string, max time.Duration) (time.Duration, bool) {
	if isSeconds(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f > max.Seconds() {
			return 0, false
		}
		d := time.Duration(math.Round(f * float64(time.Second)))
		return d, d <= max
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > max {
		return 0, false
	}
	return d, true
}

// isSeconds reports whether s is plain seconds: digits with at most one
// dot, at least one digit. No sign, exponent, "inf" or "nan".
func isSeconds(s string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}
