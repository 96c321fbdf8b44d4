package store

import (
	"encoding/json"
	"os"
	"path/filepath"

	"loadgen/results"
)

// Holds is what a results file holds.
type Holds int

const (
	HoldsRun   Holds = iota // a run (loadgen run --json), or nothing of loadgen's
	HoldsSweep              // a sweep's manifest: the sweep is its directory
	HoldsStep               // a sweep's step file
)

// Recognise says what the results file at path, whose bytes are b, holds:
// a sweep's manifest (kind "sweep", or the file is named ManifestFile), a
// step (it has a "rung"), else a run. Bytes that do not parse read as a
// run, whose reader says what is wrong with them.
func Recognise(path string, b []byte) Holds {
	var head struct {
		Kind string  `json:"kind"`
		Rung *string `json:"rung"`
	}
	_ = json.Unmarshal(b, &head)
	switch {
	case head.Kind == "sweep" || filepath.Base(path) == ManifestFile:
		return HoldsSweep
	case head.Rung != nil:
		return HoldsStep
	}
	return HoldsRun
}

// Empty says a run read from a file holds no config, summary or
// histogram: the file was JSON (a bare header, another tool's document)
// but not a loadgen run. Report and merge refuse it.
func Empty(r *results.Run) bool {
	return r.Config.Target == "" && r.Config.Protocol == "" && r.Summary.Requests == 0 && r.Histograms.Latency == ""
}

// SweepDirs names the subdirectories of dir that hold a sweep (a
// ManifestFile), in name order: a directory of sweeps, as `loadgen lab`
// writes one per protocol. None when dir is itself a sweep.
func SweepDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), ManifestFile)); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
