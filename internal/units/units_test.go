package units

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10": 10 * time.Second, "0.5": 500 * time.Millisecond, "10s": 10 * time.Second,
		"2m30s": 150 * time.Second, "250ms": 250 * time.Millisecond, " 1m ": time.Minute, "0": 0,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ten", "-1", "-5s", "1e400", "NaN", "10 s"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q): no error", bad)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "10s", 150 * time.Second: "2m30s", 2 * time.Minute: "2m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s", 250 * time.Millisecond: "250ms",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParseCountAndRate(t *testing.T) {
	for in, want := range map[string]int64{"10": 10, "1k": 1000, "1.5k": 1500, "2M": 2_000_000, "1G": 1_000_000_000, "1K": 1000} {
		if got, err := ParseCount(in); err != nil || got != want {
			t.Errorf("ParseCount(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "1.5", "-1", "1e3", "0x10", "1m", "1_000", "ten"} {
		if _, err := ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q): no error", bad)
		}
	}
	if r, err := ParseRate("1.5k"); err != nil || r != 1500 {
		t.Errorf("ParseRate(1.5k) = %v, %v", r, err)
	}
	if r, err := ParseRate("0.5"); err != nil || r != 0.5 {
		t.Errorf("ParseRate(0.5) = %v, %v", r, err)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "100B": 100, "1KiB": 1024, "1k": 1024, "64K": 65536, "1MiB": 1 << 20, "1MB": 1 << 20, "1.5KiB": 1536, "2GiB": 2 << 30} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got, _ := ParseBytes(FormatBytes(want)); got != want {
			t.Errorf("FormatBytes(%d) = %q does not read back", want, FormatBytes(want))
		}
	}
	for _, bad := range []string{"", "KiB", "-1", "1.3B", "1e3", "big", "2TiB"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q): no error", bad)
		}
	}
}

// The counts and sizes kept in an int stop at 2^31, whichever way they are
// typed, and say the input is too large.
func TestParseIntCap(t *testing.T) {
	for _, c := range []struct {
		parse func(string) (int, error)
		in    string
		want  int
		err   string
	}{
		{ParseIntCount, "2147483648", 1 << 31, ""},
		{ParseIntCount, "2147483649", 0, `"2147483649" is too large`},
		{ParseIntCount, "3G", 0, `"3G" is too large`},
		{ParseIntCount, "2G", 2_000_000_000, ""},
		{ParseIntCount, "1.5k", 1500, ""},
		{ParseIntCount, "-1", 0, `"-1" is negative`},
		{ParseIntBytes, "2GiB", 1 << 31, ""},
		{ParseIntBytes, "2147483649", 0, `"2147483649" is too large`},
		{ParseIntBytes, "3G", 0, `"3G" is too large`},
		{ParseIntBytes, "1024GiB", 0, `"1024GiB" is too large`},
		{ParseIntBytes, "64k", 65536, ""},
	} {
		got, err := c.parse(c.in)
		if msg := errString(err); got != c.want || msg != c.err {
			t.Errorf("%q: got %d, %q; want %d, %q", c.in, got, msg, c.want, c.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Whatever the input, the parsers return a value or an error naming the
// input: never a panic, never a negative quantity.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"10", "1.5k", "2m30s", "1MiB", "-1", "1e9", "NaN", "9223372036854775807s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDuration(s); err == nil && d < 0 {
			t.Errorf("ParseDuration(%q) = %v", s, d)
		} else if err != nil && !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Errorf("ParseDuration(%q): the error %q does not name the input", s, err)
		}
		if n, err := ParseCount(s); err == nil && n < 0 {
			t.Errorf("ParseCount(%q) = %v", s, n)
		}
		if r, err := ParseRate(s); err == nil && r < 0 {
			t.Errorf("ParseRate(%q) = %v", s, r)
		}
		if b, err := ParseBytes(s); err == nil && b < 0 {
			t.Errorf("ParseBytes(%q) = %v", s, b)
		}
	})
}
