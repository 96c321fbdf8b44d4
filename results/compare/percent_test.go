package compare

import "testing"

// FormatPercent writes what ParsePercent reads: the flags' defaults are
// the constants, written so.
func TestFormatPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{DefaultMaxRegression, "10%"},
		{DefaultNoise, "5%"},
		{0.001, "0.1%"},
		{0, "0%"},
		{0.125, "12.5%"},
	} {
		got := FormatPercent(tc.f)
		if got != tc.want {
			t.Errorf("FormatPercent(%v) = %q, want %q", tc.f, got, tc.want)
		}
		if back, err := ParsePercent(got); err != nil || back != tc.f {
			t.Errorf("ParsePercent(%q) = %v, %v, want %v", got, back, err, tc.f)
		}
	}
}
