package compare

import (
	"fmt"
	"testing"
)

func TestFailure(t *testing.T) {
	rows := func(v Verdict, n int) []Row {
		var out []Row
		for i := range n {
			out = append(out, Row{Step: fmt.Sprintf("s%d", i+1), Metric: "rps", Verdict: v})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		rows  []Row
		allow bool
		want  string
	}{
		{"nothing", nil, false, ""},
		{"within noise", rows(WithinNoise, 2), false, ""},
		{"one regression", rows(Regression, 1), false, "1 regression beyond 5%: s1 rps"},
		{"three", rows(Regression, 3), false, "3 regressions beyond 5%: s1 rps, s2 rps, s3 rps"},
		{"five: and 2 more", rows(Regression, 5), false, "5 regressions beyond 5%: s1 rps, s2 rps, s3 rps, and 2 more"},
		{"contended", rows(Contended, 1), false, "1 figure not decidable, worse than 5% within what contention can explain: s1 rps (--allow-contended: exit 0)"},
		{"contended, allowed", rows(Contended, 2), true, ""},
		{"regression over contended", append(rows(Contended, 1), Row{Step: "r", Metric: "p99", Verdict: Regression}), false, "1 regression beyond 5%: r p99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Comparison{Rows: tc.rows, Options: Options{MaxRegression: 0.05, AllowContended: tc.allow}}
			if got := c.Failure(); got != tc.want {
				t.Errorf("Failure() = %q, want %q", got, tc.want)
			}
		})
	}
}
