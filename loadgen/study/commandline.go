package study

import (
	"os"
	"path/filepath"
	"strings"

	"loadgen/results/store"
)

// StepFlags are the study's flags that reach each step's command line.
type StepFlags struct {
	Out     string   // the study's -o: OutDir in Args, and the parent of each step's -o
	Resume  bool     // --resume: a step whose directory holds a sweep resumes it
	Quiet   bool     // -q
	Asserts []string // --assert, each
	Labels  []string // --label's flags (results.Labels.Flags)
	JUnit   string   // this step's --junit file; "" for none
}

// CommandLine is the step's command line with the study's results
// directory, resume and checks. run is false for the plan's listing,
// which never says --resume.
func (s Step) CommandLine(f StepFlags, run bool) []string {
	dir := filepath.Join(f.Out, s.Dir)
	var args []string
	for _, a := range s.Args {
		args = append(args, strings.ReplaceAll(a, OutDir, f.Out))
	}
	args = append(args, "-o", dir)
	if run && f.Resume && !s.Whole && holdsSweep(dir) {
		args = append(args, "--resume")
	}
	if f.Quiet {
		args = append(args, "-q")
	}
	for _, a := range f.Asserts {
		args = append(args, "--assert", a)
	}
	args = append(args, f.Labels...)
	if f.JUnit != "" {
		args = append(args, "--junit", f.JUnit)
	}
	return args
}

// holdsSweep tells whether dir, or a directory in it, holds a sweep.
func holdsSweep(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, store.ManifestFile)); err == nil {
		return true
	}
	subs, err := store.SweepDirs(dir)
	return err == nil && len(subs) > 0
}
