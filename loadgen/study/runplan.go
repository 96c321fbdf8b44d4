package study

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"loadgen/results/compare"
	"loadgen/results/store"
)

// Runner runs a study's plan, one loadgen command line per step, into the
// study's results directory (RunPlan).
type Runner struct {
	Study  string // the study's name, for the progress lines
	Out    string // the study's results directory (-o)
	Resume bool   // --resume: a Whole step whose directory holds results is kept
	// Args is a step's command line (Step.CommandLine with the study's
	// flags, run true).
	Args func(Step) []string
	// RunStep runs one step's command line (loadgen's arguments, less the
	// program's name) and returns its exit status: the CLI's execute.
	RunStep func(ctx context.Context, args []string) compare.Exit
	// Progress takes the lines that say which step runs and which is kept.
	Progress io.Writer
}

// Ran is what RunPlan came to.
type Ran struct {
	// Failed are the names of the steps that failed, in the plan's order,
	// and Codes their exit statuses: 1, 108, 99 or 98.
	Failed []string
	Codes  []compare.Exit
	// Interrupted tells that a step was interrupted (exit status 130) or
	// ctx was cancelled: the steps after it did not run, and the finished
	// ones are saved for a resume.
	Interrupted bool
}

// RunPlan runs the plan's steps in order. A Whole step on resume whose
// directory already holds results is kept, not run again (it cannot
// resume itself); every other step has its Files written under Out, then
// runs. A step's failure is collected and the next one runs; an
// interruption stops the plan. A step whose command line is refused
// (exit status 2) is a bug in the study's plan: RunPlan stops with an
// error, as it does when a step's file cannot be written.
func (r Runner) RunPlan(ctx context.Context, plan []Step) (Ran, error) {
	var ran Ran
	for i, st := range plan {
		args := r.Args(st)
		fmt.Fprintf(r.Progress, "\n== study %s, step %d of %d: %s ==\n", r.Study, i+1, len(plan), st.Name)
		dir := filepath.Join(r.Out, st.Dir)
		if st.Whole && r.Resume && holdsResults(dir) {
			fmt.Fprintf(r.Progress, "kept: %s holds this step's results (k8s run cannot resume a run: delete the directory to run the step again)\n", dir)
			continue
		}
		for name, content := range st.Files {
			if err := store.WriteFile(filepath.Join(r.Out, name), []byte(content)); err != nil {
				return ran, err
			}
		}
		code := r.RunStep(ctx, args)
		switch code {
		case compare.OK, compare.Interrupted:
		case compare.Usage:
			return ran, fmt.Errorf("step %d (loadgen %s) was refused: a bug in the study's plan", i+1, strings.Join(args, " "))
		default:
			ran.Failed = append(ran.Failed, st.Name)
			ran.Codes = append(ran.Codes, code)
		}
		if code == compare.Interrupted || ctx.Err() != nil {
			ran.Interrupted = true
			return ran, nil
		}
	}
	return ran, nil
}

// CheckOut refuses a results directory the study cannot run in, before
// anything starts: on resume, one that does not exist; else one that
// already holds anything. A dry run, which writes nothing, needs neither.
func CheckOut(dir string, resume bool) error {
	if resume {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("--resume: %s holds no study: drop --resume to start one there", dir)
		}
		return nil
	}
	if holdsResults(dir) {
		return fmt.Errorf("%s already holds results: add --resume to continue the study, or choose another -o", dir)
	}
	return nil
}

// holdsResults tells whether dir holds anything.
func holdsResults(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}
