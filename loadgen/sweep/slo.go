package sweep

import (
	"fmt"

	"loadgen/results"
	"loadgen/results/compare"
)

// ParseSLO parses a --find-max objective ("p99<10ms,errors<0.1%") into the
// judge of a probe, which passes when every assertion holds, and the text the
// search records. Assertions on watched processes are refused: a probe does
// not measure what they cost.
func ParseSLO(expr string) (SLO, string, error) {
	as, err := compare.ParseAll([]string{expr})
	if err != nil {
		return nil, "", fmt.Errorf("--slo: %w", err)
	}
	for _, a := range as {
		if a.Process() != "" {
			return nil, "", fmt.Errorf("--slo %s: a probe judges the load's own figures; what watched processes cost is not measured per probe", a)
		}
	}
	return func(run *results.Run) (bool, string) {
		for _, a := range as {
			if r := a.Eval(run, nil); !r.Pass {
				return false, r.Message()
			}
		}
		return true, ""
	}, expr, nil
}
