// Package units reads and prints the quantities loadgen's users type, with
// one grammar everywhere — every flag, every sweep file:
//
//   - durations: Go's (10s, 1m30s, 250ms) or plain seconds (10, 0.5), as wrk
//     takes them;
//   - counts and rates: a number with an optional SI suffix, k M G (1k =
//     1000), as wrk's -c, -t and -R take them (1k, 1.5k, 2M);
//   - sizes in bytes: a number with an optional binary suffix — KiB MiB
//     GiB, or K M G, KB MB GB, all ×1024 as payload tables use — and an
//     optional B (100, 100B, 1KiB, 1k, 1MiB).
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration: Go's syntax or plain seconds. Negative
// durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		secs, ferr := strconv.ParseFloat(t, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > math.MaxInt64/1e9 {
			return 0, fmt.Errorf("%q is not a duration: use e.g. 10s, 1m30s, 250ms or plain seconds", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// FormatDuration prints a duration as a user would type it: 10s, 2m30s,
// 1h, 1.5s, 250ms.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseRate reads a non-negative number with an optional SI suffix: 1500,
// 1.5k, 2M.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'M':
			mult = 1e6
		case 'G':
			mult = 1e9
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "eEpPxX_") {
		return 0, fmt.Errorf("%q is not a number: use e.g. 1500, 1.5k or 2M", s)
	}
	v *= mult
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return v, nil
}

// ParseCount reads a whole non-negative number with an optional SI suffix:
// 10, 1k, 1.5k (1500), 2M.
func ParseCount(s string) (int64, error) {
	v, err := ParseRate(s)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || v > 1<<62 {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return int64(v), nil
}

// MaxInt is the largest count or size loadgen keeps in an int (a flag's
// connections, threads, a body's size): 2^31. ParseIntCount and
// ParseIntBytes refuse more.
const MaxInt = 1 << 31

// ParseIntCount reads a count (ParseCount) of at most MaxInt.
func ParseIntCount(s string) (int, error) {
	n, err := ParseCount(s)
	if err != nil {
		return 0, err
	}
	return capInt(s, n)
}

// ParseIntBytes reads a size in bytes (ParseBytes) of at most MaxInt.
func ParseIntBytes(s string) (int, error) {
	n, err := ParseBytes(s)
	if err != nil {
		return 0, err
	}
	return capInt(s, n)
}

func capInt(s string, n int64) (int, error) {
	if n > MaxInt {
		return 0, errors.New(`"` + s + `" is too large`)
	}
	return int(n), nil
}

// ParseBytes reads a size in bytes (binary suffixes: 1k = 1KiB = 1024).
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "epx_") {
		return 0, fmt.Errorf("%q is not a size: use bytes like 100, 1KiB, 64k or 1MiB", s)
	}
	n := v * mult
	if n < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	if n != math.Trunc(n) || n > 1<<40 {
		return 0, fmt.Errorf("%q is not a whole number of bytes (up to 1TiB)", s)
	}
	return int64(n), nil
}

// FormatBytes prints a size the way ParseBytes reads it: 100B, 1KiB, 1MiB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
