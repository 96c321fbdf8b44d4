package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sig formats v with about three significant figures, without trailing
// zeros: 23.4, 1.23, 123, 12346.
func sig(v float64) string {
	a := math.Abs(v)
	prec := 0
	switch {
	case a == 0:
	case a < 1:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a < 10:
		prec = 2
	case a < 100:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// exact formats v in full.
func exact(v float64) string { return plain(v) }

func number(v float64) string { return sig(v) }

func percent(v float64) string { return sig(v) + "%" }

// duration formats nanoseconds: 850us, 23.4ms, 1.2s; the unit is chosen
// after rounding, so 999.9us is 1ms, never 1000us.
func duration(ns float64) string {
	return scaled(ns, []float64{1e9, 1e6, 1e3}, []string{"s", "ms", "us"}, "ns")
}

// byteSize formats a size in binary units: 512B, 1.5KiB, 200MiB.
func byteSize(n float64) string {
	return scaled(n, []float64{1 << 30, 1 << 20, 1 << 10}, []string{"GiB", "MiB", "KiB"}, "B")
}

// scaled prints v in the largest of units (scales, largest first) that
// its value, rounded as sig rounds it, reaches; base below them all.
func scaled(v float64, scales []float64, names []string, base string) string {
	for i, s := range scales {
		if x := sig(v / s); math.Abs(parseFloat(x)) >= 1 {
			return x + names[i]
		}
	}
	return sig(v) + base
}

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// ParsePercent reads a share such as "10%" or "10" (both ten percent) and
// returns it as a fraction, 0.10.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is negative: want a percentage like 10%%", s)
	}
	v, err := parseNumber(t)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percentage: want e.g. 10%%", s)
	}
	return v / 100, nil
}

// FormatPercent prints a fraction as a percentage: 0.1 → "10%", as
// ParsePercent reads it (the flags' defaults: DefaultMaxRegression).
func FormatPercent(f float64) string { return sig(100*f) + "%" }
