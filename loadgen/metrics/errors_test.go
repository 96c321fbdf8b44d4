package metrics

import (
	"testing"

	"loadgen/results"
)

func TestErrorsByClass(t *testing.T) {
	for _, tc := range []struct {
		class string
		errs  results.Errors
	}{
		{"connect", results.Errors{Connect: 3}},
		{"read", results.Errors{Read: 3}},
		{"write", results.Errors{Write: 3}},
		{"timeout", results.Errors{Timeout: 3}},
		{"status", results.Errors{Status: 3}},
		{"protocol", results.Errors{Protocol: 3}},
	} {
		t.Run(tc.class, func(t *testing.T) {
			got := ErrorsByClass(tc.errs)
			if len(got) != len(ErrorClasses)-1 {
				t.Errorf("%d classes, want every class of ErrorClasses but \"any\": %v", len(got), got)
			}
			for _, c := range ErrorClasses[1:] {
				want := int64(0)
				if c == tc.class {
					want = tc.errs.Total()
				}
				if n, ok := got[c]; !ok || n != want {
					t.Errorf("class %s = %d (present %v), want %d", c, n, ok, want)
				}
			}
		})
	}
}
