package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"loadgen/results"
)

// Sweep directory layout: the manifest, then one file per step.
const (
	ManifestFile = "manifest.json"
	StepsDir     = "steps"
)

// ReadSweep loads a sweep's results directory: its manifest and every step
// written so far, in plan order. Steps not yet run are absent; a step file
// that does not decode is an error naming it.
func ReadSweep(dir string) (*results.Manifest, []*results.Step, error) {
	mpath := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(mpath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s is not a sweep's results directory (no %s)", dir, ManifestFile)
		}
		return nil, nil, err
	}
	var m results.Manifest
	if err := decode(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", mpath, err)
	}
	if m.Kind != "sweep" {
		return nil, nil, fmt.Errorf("%s: kind %q, want sweep", mpath, m.Kind)
	}
	var steps []*results.Step
	for _, id := range m.Steps {
		st, err := ReadStep(filepath.Join(dir, StepsDir, id+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, st)
	}
	return &m, steps, nil
}
