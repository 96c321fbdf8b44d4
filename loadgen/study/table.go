package study

import (
	"errors"
	"path/filepath"
)

// TableKind is which table a study prints once its steps ran.
type TableKind int

const (
	// TableCompared is the published figures beside the measured ones
	// (Compare), for each set measured (MeasuredSets).
	TableCompared TableKind = iota
	// TablePaths is the study's k8s paths step's own table (PathsDir):
	// the study publishes a method, not figures.
	TablePaths
	// TableOurs is the steps' own tables alone: the study's figures are
	// not in the repository yet.
	TableOurs
)

// TableFor is the table study s prints; published tells whether its
// figures are in the repository (Published).
func (s Study) TableFor(published bool) TableKind {
	switch {
	case s.PathsTable:
		return TablePaths
	case !published:
		return TableOurs
	}
	return TableCompared
}

// PathsDir is where, under the study's results directory out, the k8s
// paths step of a study whose table is its own (TablePaths) keeps its
// results: its plan's one step's directory.
func (s Study) PathsDir(out string, o Options) string {
	plan := s.Plan(o)
	if len(plan) == 0 {
		return out
	}
	return filepath.Join(out, plan[0].Dir)
}

// CheckBounds refuses, before anything runs, a duration below zero (0 is
// the study's own) and fewer than one CPU to size.
func (o Options) CheckBounds() error {
	if o.Duration < 0 || o.CPUs < 1 {
		return errors.New("-d must not be negative and --cpus at least 1")
	}
	return nil
}
