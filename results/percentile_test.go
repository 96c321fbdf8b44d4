package results

import "testing"

// SummaryPercentiles are exactly the percentiles Latency.At holds: the help
// of run's --percentiles lists them from it.
func TestSummaryPercentilesAreAt(t *testing.T) {
	for _, p := range SummaryPercentiles {
		if _, ok := (Latency{}).At(p); !ok {
			t.Errorf("At(%v): not in the summary, but SummaryPercentiles lists it", p)
		}
	}
	for _, p := range []float64{1, 25, 60, 80, 99.5, 99.999} {
		if _, ok := (Latency{}).At(p); ok {
			t.Errorf("At(%v): in the summary, but SummaryPercentiles lacks it", p)
		}
	}
	for _, p := range DefaultPercentiles {
		if _, ok := (Latency{}).At(p); !ok {
			t.Errorf("DefaultPercentiles' %v is not in the summary", p)
		}
	}
}

func TestFormatPercentiles(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},
		{[]float64{50}, "50"},
		{DefaultPercentiles, "50,90,95,99,99.9,99.99"},
		{[]float64{99.5, 75}, "99.5,75"},
	} {
		if got := FormatPercentiles(c.in); got != c.want {
			t.Errorf("FormatPercentiles(%v) = %q, want %q", c.in, got, c.want)
		}
		if c.in == nil {
			continue
		}
		back, err := ParsePercentiles(FormatPercentiles(c.in))
		if err != nil || len(back) != len(c.in) {
			t.Errorf("ParsePercentiles(FormatPercentiles(%v)) = %v, %v", c.in, back, err)
		}
	}
}
