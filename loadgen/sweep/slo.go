package sweep

import (
	"errors"
	"fmt"

	"loadgen/results"
	"loadgen/results/compare"
)

// ParseFindMax checks --find-max and --slo together (each needs the
// other) and returns the judge and the objective's text the search
// records: none without --find-max.
func ParseFindMax(findMax bool, slo string) (SLO, string, error) {
	switch {
	case findMax && slo == "":
		return nil, "", errors.New("--find-max needs --slo, e.g. --slo 'p99<10ms,errors<0.1%'")
	case !findMax && slo != "":
		return nil, "", errors.New("--slo goes with --find-max (for checks on every step, use --assert)")
	case !findMax:
		return nil, "", nil
	}
	return ParseSLO(slo)
}

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
