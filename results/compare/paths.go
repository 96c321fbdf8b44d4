package compare

import (
	"fmt"

	"loadgen/results/store"
)

// ParseOptions reads `loadgen compare`'s --max-regression and --noise
// (shares, as ParsePercent reads them) into Options. The noise band must
// be more than 0: with none, every difference would be a change. The
// errors name the flags.
func ParseOptions(maxRegression, noise string) (Options, error) {
	maxReg, err := ParsePercent(maxRegression)
	if err != nil {
		return Options{}, fmt.Errorf("--max-regression: %w", err)
	}
	n, err := ParsePercent(noise)
	if err != nil {
		return Options{}, fmt.Errorf("--noise: %w", err)
	}
	if n <= 0 {
		return Options{}, fmt.Errorf("--noise %s: must be more than 0%%", noise)
	}
	return Options{Noise: n, MaxRegression: maxReg}, nil
}

// Compared is what Paths compared: two runs or two sweeps (C), or two
// directories of sweeps sweep by sweep (Subs, and C holding every sweep's
// rows, as SubSweeps' all).
type Compared struct {
	Subs []SubSweep // directories of sweeps only: each sweep of A, in name order; nil otherwise
	C    Comparison
}

// Paths compares B with A as `loadgen compare A B` does: two run files
// (or sweep step files), two sweeps' results directories, or two
// directories of sweeps (loadgen lab's, one per protocol), each sweep of
// a with its namesake in b (SubSweeps). It refuses a run against a sweep,
// a path that does not exist or cannot be read, and sweeps of which no
// step matched. With directories of sweeps, an error comes with the
// sweeps compared before it (Subs), which the caller shows first.
func Paths(a, b string, opt Options) (Compared, error) {
	sweepA, err := IsSweepDir(a)
	if err != nil {
		return Compared{}, err
	}
	sweepB, err := IsSweepDir(b)
	if err != nil {
		return Compared{}, err
	}
	if sweepA != sweepB {
		kind := func(s bool) string {
			if s {
				return "a sweep directory"
			}
			return "a run file"
		}
		return Compared{}, fmt.Errorf("%s is %s but %s is %s: compare two runs or two sweeps", a, kind(sweepA), b, kind(sweepB))
	}
	if !sweepA {
		ra, err := ReadRunFile(a)
		if err != nil {
			return Compared{}, err
		}
		rb, err := ReadRunFile(b)
		if err != nil {
			return Compared{}, err
		}
		c := Runs(ra, rb, opt)
		c.A, c.B = a, b
		return Compared{C: c}, nil
	}
	if names, _ := store.SweepDirs(a); len(names) > 0 {
		subs, all, err := SubSweeps(a, b, names, opt)
		return Compared{Subs: subs, C: all}, err
	}
	c, err := Sweeps(a, b, opt)
	if err != nil {
		return Compared{}, err
	}
	if !c.Matched() {
		return Compared{}, fmt.Errorf("nothing to compare: no step of %s ran in %s (steps match by %s)", a, b, c.MatchedBy)
	}
	return Compared{C: c}, nil
}
