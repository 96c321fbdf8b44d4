package merge

import (
	"errors"
	"fmt"
	"os"
)

// ReadFiles reads the runs to merge from files (Decode): each a run file
// (loadgen run --json) or a sweep's step file. It refuses a path that
// does not exist, a directory, and one file given twice, under one name
// or two (a link): its requests would count twice.
func ReadFiles(paths []string) ([]Input, error) {
	var in []Input
	var seen []os.FileInfo
	for _, path := range paths {
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", path)
		}
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory: merge takes run files (loadgen run --json) or a sweep's steps/*.json", path)
		}
		for j, prev := range seen {
			if os.SameFile(prev, fi) {
				return nil, fmt.Errorf("%s and %s are the same file: give each generator's run once", paths[j], path)
			}
		}
		seen = append(seen, fi)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		x, err := Decode(path, b)
		if err != nil {
			return nil, err
		}
		in = append(in, x)
	}
	return in, nil
}
