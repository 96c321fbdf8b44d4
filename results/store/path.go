package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"loadgen/results"
)

// Path is what a results path holds, read: the sweeps of a sweep's
// directory, of its manifest or of a directory of sweeps (`loadgen lab`
// writes one per protocol), or the run of a run file or of a sweep's step
// file. A study's directory is loadgen/study's to read (study.ReadSweeps).
type Path struct {
	Holds  Holds
	Sweeps []Sweep
	Run    *results.Run
}

// Sweep is one sweep read from its directory.
type Sweep struct {
	Dir      string
	Manifest *results.Manifest
	Steps    []*results.Step
}

// ReadPath reads what path holds: a directory is a sweep, or holds sweeps
// in subdirectories (SweepDirs, in name order); a file is a sweep's
// manifest (its directory's sweep), a step (its run; a failed step is an
// error, NoRun's) or a run, as read, which the caller judges (Empty).
func ReadPath(path string) (Path, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Path{}, err
	}
	if info.IsDir() {
		names, err := SweepDirs(path)
		if err != nil {
			return Path{}, err
		}
		if len(names) == 0 {
			s, err := readSweep(path)
			if err != nil {
				return Path{}, err
			}
			return Path{Holds: HoldsSweep, Sweeps: []Sweep{s}}, nil
		}
		p := Path{Holds: HoldsSweep}
		for _, name := range names {
			s, err := readSweep(filepath.Join(path, name))
			if err != nil {
				return Path{}, err
			}
			p.Sweeps = append(p.Sweeps, s)
		}
		return p, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Path{}, err
	}
	switch h := Recognise(path, b); h {
	case HoldsSweep:
		s, err := readSweep(filepath.Dir(path))
		if err != nil {
			return Path{}, err
		}
		return Path{Holds: h, Sweeps: []Sweep{s}}, nil
	case HoldsStep:
		st, err := ReadStep(path)
		if err != nil {
			return Path{}, err
		}
		if st.Run == nil {
			return Path{}, NoRun(path, st.Failed)
		}
		return Path{Holds: h, Run: st.Run}, nil
	}
	run, err := ReadRun(path)
	if err != nil {
		return Path{}, err
	}
	return Path{Holds: HoldsRun, Run: run}, nil
}

func readSweep(dir string) (Sweep, error) {
	m, steps, err := ReadSweep(dir)
	if err != nil {
		return Sweep{}, err
	}
	return Sweep{Dir: dir, Manifest: m, Steps: steps}, nil
}

// NoRun is the error of a step file that failed, so holds no run, as
// report, compare and merge say it: the reason on one line.
func NoRun(path, failed string) error {
	if failed == "" {
		failed = "no reason given"
	}
	return fmt.Errorf("%s: the step failed (%s): it has no run", path, strings.ReplaceAll(failed, "\n", " "))
}
