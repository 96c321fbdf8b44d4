package sweep

import (
	"fmt"
	"os"
	"testing"
)

func TestCostProbes(t *testing.T) {
	var _ Probes = CostProbes{}
	self := fmt.Sprintf("pid:%d", os.Getpid())
	for _, tc := range []struct {
		selector string
		ok       bool
	}{
		{self, true},
		{"", false},
		{"nonsense:1", false},
		{"pid:2147483646", false}, // no such process
	} {
		t.Run(tc.selector, func(t *testing.T) {
			if err := (CostProbes{}).Check(tc.selector); (err == nil) != tc.ok {
				t.Errorf("Check: %v, want ok %v", err, tc.ok)
			}
			stop, err := CostProbes{}.Start(tc.selector)
			if (err == nil) != tc.ok {
				t.Fatalf("Start: %v, want ok %v", err, tc.ok)
			}
			if err == nil {
				if c := stop(); c.Samples < 1 || c.Processes != 1 {
					t.Errorf("own process: %+v, want a sample of one process", c)
				}
			}
		})
	}
}
