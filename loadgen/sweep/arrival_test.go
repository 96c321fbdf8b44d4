package sweep

import (
	"strings"
	"testing"
)

func TestCheckArrival(t *testing.T) {
	for _, tc := range []struct {
		name      string
		arrival   string
		jitterPct float64
		rates     Rates
		findMax   bool
		err       string
	}{
		{"nothing asked", "", 0, Rates{0}, false, ""},
		{"poisson, open loop", "poisson", 0, Rates{1000}, false, ""},
		{"jitter, one open step", "", 10, Rates{0, 500}, false, ""},
		{"poisson, find-max", "poisson", 0, Rates{0}, true, ""},
		{"poisson, closed loop", "poisson", 0, Rates{0}, false, "arrival poisson, jitter 0% paces an open loop: add -R (rates"},
		{"jitter, no rates", "", 10, nil, false, "arrival uniform, jitter 10% paces an open loop: add -R (rates; every step is closed loop); a closed loop sends"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Spec{Arrival: tc.arrival, JitterPct: tc.jitterPct, Rates: tc.rates}
			err := s.CheckArrival(tc.findMax)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}
