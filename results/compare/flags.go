package compare

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// CheckBaselineFlags refuses the flags that judge against a baseline
// (--max-regression, --judge-contended, --allow-contended) when given
// (given says whether a flag was) without one (baseline: --baseline), and
// returns --max-regression's value: maxRegression, or
// DefaultMaxRegression's when empty.
func CheckBaselineFlags(given func(name string) bool, baseline, maxRegression string) (string, error) {
	for _, name := range []string{"max-regression", "judge-contended", "allow-contended"} {
		if given(name) && baseline == "" {
			return "", fmt.Errorf("--%s needs --baseline: the results to compare with", name)
		}
	}
	if maxRegression == "" {
		maxRegression = FormatPercent(DefaultMaxRegression)
	}
	return maxRegression, nil
}

// ParseAbort checks --abort-on-fail (on) and the flags that go with it
// against the parsed assertions (asserts, --assert), before any load, and
// returns those judged while the load runs (Judged):
//   - --abort-after and --keep-going (given says whether each was) only
//     with --abort-on-fail;
//   - --abort-on-fail not with --find-max, whose probes are judged at
//     their end, and only with --assert;
//   - --abort-after (after) not negative;
//   - at least one assertion judged while the load runs.
func ParseAbort(on bool, after time.Duration, given func(name string) bool, findMax bool, asserts []Assertion) ([]Assertion, error) {
	if !on {
		for _, name := range []string{"abort-after", "keep-going"} {
			if given(name) {
				return nil, fmt.Errorf("--%s goes with --abort-on-fail", name)
			}
		}
		return nil, nil
	}
	if findMax {
		return nil, errors.New("--abort-on-fail and --find-max: a probe is judged by --slo at its end (the search needs its figures)")
	}
	if len(asserts) == 0 {
		return nil, errors.New("--abort-on-fail needs --assert: the assertions whose breach stops the run, e.g. --assert 'p99<20ms,errors<1%'")
	}
	if after < 0 {
		return nil, fmt.Errorf("--abort-after must not be negative, got %s", after)
	}
	live, atEnd := Judged(asserts)
	if len(live) == 0 {
		var names []string
		for _, x := range atEnd {
			names = append(names, x.String())
		}
		return nil, fmt.Errorf("--abort-on-fail: none of the assertions (%s) can be judged while the load runs: %s are judged at the end only", strings.Join(names, ", "), JudgedAtEnd)
	}
	return live, nil
}
