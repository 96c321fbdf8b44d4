package compare

import (
	"fmt"
	"os"
	"path/filepath"

	"loadgen/results/store"
)

// SubSweep is one sweep of a directory of sweeps compared: Missing when b
// has no sweep of that name, else its comparison C.
type SubSweep struct {
	Name    string
	Missing bool
	C       Comparison
}

// SubSweeps compares two directories of sweeps (loadgen lab's, one per
// protocol) sweep by sweep: each of names in a matched by name in b. all
// holds every sweep's rows, each step prefixed by its sweep's name. On an
// error, the sweeps compared before it are returned with it. Nothing
// matched in any sweep is an error.
func SubSweeps(a, b string, names []string, opt Options) (subs []SubSweep, all Comparison, err error) {
	matched := 0
	for _, name := range names {
		da, db := filepath.Join(a, name), filepath.Join(b, name)
		if _, err := os.Stat(filepath.Join(db, store.ManifestFile)); err != nil {
			subs = append(subs, SubSweep{Name: name, Missing: true})
			continue
		}
		c, err := Sweeps(da, db, opt)
		if err != nil {
			return subs, all, err
		}
		subs = append(subs, SubSweep{Name: name, C: c})
		if c.Matched() {
			matched++
		}
		all.Options = c.Options
		for _, r := range c.Rows {
			r.Step = name + " " + r.Step // for the exit message: which sweep
			all.Rows = append(all.Rows, r)
		}
	}
	if matched == 0 {
		return subs, all, fmt.Errorf("nothing to compare: no sweep of %s has a step that ran in %s", a, b)
	}
	return subs, all, nil
}
