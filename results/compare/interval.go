package compare

import (
	"math"
	"sort"
)

// The confidence of the intervals a comparison gives its ratios.
const (
	// TargetLevel is the confidence an interval aims at: the narrowest
	// interval of at least this confidence is taken.
	TargetLevel = 0.95
	// MinLevel is the least confidence a verdict is judged on: fewer
	// repeats than give it (three a side give 90%, two and three 80%)
	// leave a point verdict, whose noise cannot be told.
	MinLevel = 0.80
)

// Interval is a distribution-free confidence interval for how B differs
// from A over their repeats: for a ratio B/A, or for a difference B−A.
//
// It is the interval of Hodges and Lehmann and of Moses, which the
// Mann–Whitney test inverts: of the m·n pairwise ratios b_j/a_i (or
// differences b_j−a_i), sorted, it runs from the k-th smallest to the
// k-th largest, k the largest for which the Mann–Whitney statistic's own
// distribution gives at least TargetLevel. With few repeats no k reaches
// it and k is 1: the interval is then from the smallest pairwise ratio to
// the largest (min B / max A .. max B / min A), and its confidence is
// 1 − 2/C(m+n, m): 90% for three repeats a side, 97% for four, 80% for
// two and three. Its one assumption is that noise scales B's figures as
// it does A's (a shift on the log scale); it needs no normality, which
// three repeats could never show, and unlike a bootstrap it states its
// confidence exactly.
type Interval struct {
	Lo, Hi float64
	Level  float64 // the confidence, 0..1; 0 when there is no interval
}

// OK tells whether the interval is confident enough to judge by.
func (iv Interval) OK() bool { return iv.Level >= MinLevel-1e-9 }

// Spans tells whether x lies within the interval.
func (iv Interval) Spans(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// RatioInterval is the interval of B/A over the repeats xa and xb. When
// a figure is not positive (no ratio of it means anything), it is the
// interval of B−A over A's median, plus one.
func RatioInterval(xa, xb []float64) Interval {
	if len(xa) == 0 || len(xb) == 0 {
		return Interval{}
	}
	positive := true
	for _, x := range append(append([]float64(nil), xa...), xb...) {
		positive = positive && x > 0 && !math.IsInf(x, 0)
	}
	if !positive {
		med := statOf(xa).Median
		if med <= 0 {
			return Interval{}
		}
		d := DiffInterval(xa, xb)
		return Interval{Lo: 1 + d.Lo/med, Hi: 1 + d.Hi/med, Level: d.Level}
	}
	return pairwise(xa, xb, func(a, b float64) float64 { return b / a })
}

// DiffInterval is the interval of B−A over the repeats xa and xb.
func DiffInterval(xa, xb []float64) Interval {
	if len(xa) == 0 || len(xb) == 0 {
		return Interval{}
	}
	return pairwise(xa, xb, func(a, b float64) float64 { return b - a })
}

func pairwise(xa, xb []float64, f func(a, b float64) float64) Interval {
	d := make([]float64, 0, len(xa)*len(xb))
	for _, a := range xa {
		for _, b := range xb {
			d = append(d, f(a, b))
		}
	}
	sort.Float64s(d)
	k, level := orderFor(len(xa), len(xb))
	return Interval{Lo: d[k-1], Hi: d[len(d)-k], Level: level}
}

// orderFor is the k of the interval for m and n repeats, and its
// confidence 1 − 2·P(U ≤ k−1), U the Mann–Whitney statistic when A and
// B do not differ.
func orderFor(m, n int) (k int, level float64) {
	mn := m * n
	if mn > 40000 { // a thousand repeats: the normal approximation is exact enough
		z := 1.959963984540054
		k = int(math.Floor(float64(mn)/2 - z*math.Sqrt(float64(mn*(m+n+1))/12)))
		return max(k, 1), TargetLevel
	}
	counts := mannWhitney(m, n)
	var total float64
	for _, c := range counts {
		total += c
	}
	k, level = 1, 1-2*counts[0]/total
	below := counts[0] // P(U ≤ k−1)·total for the next k
	for next := 2; next <= (mn+1)/2; next++ {
		below += counts[next-1]
		l := 1 - 2*below/total
		if l < TargetLevel {
			break
		}
		k, level = next, l
	}
	return k, level
}

// mannWhitney counts the orderings of m and n values by their
// Mann–Whitney statistic U = 0..m·n: the coefficients of the Gaussian
// binomial [m+n choose m] in q, built as the product over i of
// (1 − q^(n+i)) / (1 − q^i).
func mannWhitney(m, n int) []float64 {
	p := make([]float64, m*n+m+1)
	p[0] = 1
	deg := 0
	for i := 1; i <= m; i++ {
		// × (1 − q^(n+i)), from the top down.
		for j := deg + n + i; j >= n+i; j-- {
			p[j] -= p[j-n-i]
		}
		// ÷ (1 − q^i): a running sum with stride i; the division is
		// exact, so past the quotient's degree nothing is left.
		deg += n
		for j := i; j <= deg; j++ {
			p[j] += p[j-i]
		}
		clear(p[deg+1:])
	}
	return p[:m*n+1]
}
