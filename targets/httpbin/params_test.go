package httpbin

import (
	"strconv"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true},
		{"100", 100, true},
		{"007", 7, true},
		{"1024", 1024, true},
		{"1025", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
		{" 1", 0, false},
		{"99999999999999999999999", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			n, err := parseBytes([]byte(tc.in), 1024)
			if (err == nil) != tc.ok || n != tc.want {
				t.Fatalf("parseBytes(%q) = %d, %v; want %d, ok %v", tc.in, n, err, tc.want, tc.ok)
			}
			if err != nil && err.Error() != "n must be 0..1024" {
				t.Fatalf("message %q", err)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"100", 0, false},
		{"200", 200, true},
		{"200", 200, true},
		{"599", 599, true},
		{"99", 0, false},
		{"600", 0, false},
		{"0200", 200, true},
		{"", 0, false},
		{"2x0", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			code, err := parseStatus([]byte(tc.in))
			if (err == nil) != tc.ok || code != tc.want {
				t.Fatalf("parseStatus(%q) = %d, %v; want %d, ok %v", tc.in, code, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseDelay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{".5", 500 * time.Millisecond, true},
		{"10ms", 10 * time.Millisecond, true},
		{"1.5s", 1500 * time.Millisecond, true},
		{"1m", time.Minute, true},
		{"60", time.Minute, true},
		{"60.0000001", 0, false},
		{"61", 0, false},
		{"1h", 0, false},
		{"-1", 0, false},
		{"-1s", 0, false},
		{"", 0, false},
		{".", 0, false},
		{"1..2", 0, false},
		{"inf", 0, false},
		{"NaN", 0, false},
		{"1e1", 0, false},
		{"0x10", 0, false},
		{"abc", 0, false},
		{"99999999999999999999999999", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, err := parseDelay([]byte(tc.in), time.Minute)
			if (err == nil) != tc.ok || d != tc.want {
				t.Fatalf("parseDelay(%q) = %v, %v; want %v, ok %v", tc.in, d, err, tc.want, tc.ok)
			}
		})
	}
}

// FuzzParseBytes checks that parseBytes never panics and accepts exactly the
// decimal numbers 0..max.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "100", "1048576", "1048577", "-1", "+5", "1.5", "", "00000000000000000000001", "18446744073709551617"} {
		f.Add(s)
	}
	const max = 1 << 20
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseBytes([]byte(s), max)
		ref, rerr := strconv.ParseUint(s, 10, 64)
		wantOK := rerr == nil && ref <= max && s != "" && s[0] != '+'
		if (err == nil) != wantOK {
			t.Fatalf("parseBytes(%q) = %d, %v; reference %d, %v", s, n, err, ref, rerr)
		}
		if err == nil && uint64(n) != ref {
			t.Fatalf("parseBytes(%q) = %d, want %d", s, n, ref)
		}
	})
}

// FuzzParseDelay checks that parseDelay never panics and that what it accepts
// is within 0..max.
func FuzzParseDelay(f *testing.F) {
	for _, s := range []string{"0", "2", "0.5", "10ms", "1.5s", "60", "61", "-1s", "1h", "inf", "NaN", "1e400", ".", "1..2", "9223372036854775807ns", "0.0000000001"} {
		f.Add(s)
	}
	const max = time.Minute
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDelay([]byte(s), max)
		if err != nil {
			if d != 0 {
				t.Fatalf("parseDelay(%q) = %v with error %v", s, d, err)
			}
			return
		}
		if d < 0 || d > max {
			t.Fatalf("parseDelay(%q) = %v, outside 0..%v", s, d, max)
		}
		if isSeconds(s) {
			f, _ := strconv.ParseFloat(s, 64)
			if want := time.Duration(f * float64(time.Second)); d-want > time.Nanosecond || want-d > time.Nanosecond {
				t.Fatalf("parseDelay(%q) = %v, want %v", s, d, want)
			}
		} else if want, _ := time.ParseDuration(s); d != want {
			t.Fatalf("parseDelay(%q) = %v, want %v", s, d, want)
		}
	})
}
