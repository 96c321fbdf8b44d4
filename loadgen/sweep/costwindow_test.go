package sweep

import (
	"testing"
	"time"
)

// TestCostWindow checks that the cost window is the measured window less
// TrimStart and TrimEnd, by default min(1 s, a quarter of it) at its end
// only.
func TestCostWindow(t *testing.T) {
	d := func(x time.Duration) *Duration { v := Duration(x); return &v }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		window     time.Duration
		start, end *Duration
		from, to   time.Duration
	}{
		{"default", 30 * time.Second, nil, nil, 0, 29 * time.Second},
		{"default, short", 2 * time.Second, nil, nil, 0, 1500 * time.Millisecond},
		{"istio/tools", 240 * time.Second, d(62 * time.Second), d(30 * time.Second), 62 * time.Second, 210 * time.Second},
		{"start only", 30 * time.Second, d(5 * time.Second), nil, 5 * time.Second, 29 * time.Second},
		{"end zero", 30 * time.Second, nil, d(0), 0, 30 * time.Second},
	}
	for _, tc := range cases {
		s := Spec{TrimStart: tc.start, TrimEnd: tc.end}
		from, to := s.CostWindow(t0, t0.Add(tc.window))
		if from.Sub(t0) != tc.from || to.Sub(t0) != tc.to {
			t.Errorf("%s: [%s, %s], want [%s, %s]", tc.name, from.Sub(t0), to.Sub(t0), tc.from, tc.to)
		}
	}
}
