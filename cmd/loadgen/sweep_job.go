package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"loadgen/loadgen"
	"loadgen/loadgen/metrics"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/live"
	"loadgen/results/report"
	"loadgen/results/store"
	"text/tabwriter"
)

// sweepJob is a sweep ready to run: the plan, where its results go, and
// what to print besides the table.
type sweepJob struct {
	spec    *sweep.Spec
	out     string
	resume  bool
	quiet   bool
	check   *checkFlags
	findMax bool
	slo     sweep.SLO
	sloText string
	note    string // printed under the table
	// resumeCmd is the command that continues it (sweep.ResumeCommand):
	// its own, or a bigger run's of which it is one part (a lab's
	// protocol).
	resumeCmd string
	extra     func(io.Writer, []*results.Step) error // more tables after the sweep's
	dryRun    bool                                   // print the plan, send nothing
	sidecars  *sidecarPaths                          // the paths through local sidecars, running
	live      *metrics.Exporter                      // --prometheus
	wide      bool                                   // every column of the table, whatever the terminal's width
	abort     *abortFlags                            // --abort-on-fail: nil for none
	ui        *live.State                            // --ui: nil for none
	labels    results.Labels                         // --label: every step's run carries them
}

func (j sweepJob) execute(ctx context.Context, stdout, stderr io.Writer) error {
	spec := j.spec
	plan := spec.Plan()
	where := "results in " + j.out
	if j.dryRun {
		where = "dry run: nothing is sent or written"
	}
	if j.findMax {
		fm := spec.FindMaxPlan()
		fmt.Fprint(stderr, report.Wrap(fmt.Sprintf("sweep --find-max: searching %s, %s per probe; %s",
			plural(len(fm.Searches), "path × step × payload combination"), fm.PerProbe, where), maxWidth, "  "))
	} else {
		fmt.Fprint(stderr, report.Wrap(fmt.Sprintf("sweep: %s (%s × %s × %s × %s × %s), about %s; %s",
			plural(len(plan), "step"), plural(len(spec.Paths), "path"), plural(len(spec.Ladder), "ladder step"), plural(len(spec.Payloads), "payload"),
			plural(len(spec.Rates), "rate"), plural(spec.Repeats, "repeat"), spec.PlanTime(len(plan)), where), maxWidth, "  "))
	}

	total := len(plan)
	if j.findMax {
		total = 0 // a search's probes are not known up front
	}
	prog := newSweepProgress(stderr, total, j.quiet)
	runCtx, halt := j.abort.halting(ctx) // --abort-on-fail stops the sweep at a step that aborted
	r := &sweep.Runner{
		Spec: spec, Dir: j.out, Resume: j.resume,
		Build: func(ctx context.Context, p sweep.Path, st sweep.Step) (loadgen.Config, protocol.Dialer, error) {
			if err := j.sidecars.check(p.Name); err != nil {
				return loadgen.Config{}, nil, err
			}
			cfg, d, err := buildStep(spec, p, st)
			cfg.LiveLatency = j.live != nil
			cfg.Labels = j.labels
			j.abort.apply(&cfg)
			if err == nil {
				sweepStepUI(j.ui, &cfg, st)
			}
			return cfg, d, err
		},
		After:  func(p sweep.Path, _ sweep.Step) error { return j.sidecars.check(p.Name) },
		Probes: sweep.CostProbes{},
		Events: halt.Events(j.liveEvents(sweepEvents(j.ui, prog.event))),
	}
	if err := r.Check(); err != nil {
		return err // before any load: the command line must change
	}
	if j.dryRun && j.findMax {
		return findMaxPlan(stdout, spec, j.sloText)
	}
	if j.dryRun {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "#\tstep\turl\t\n")
		for _, st := range plan {
			fmt.Fprintf(tw, "%d\t%s\t%s\t\n", st.Index+1, st.ID(), pathWhere(spec, st.Path))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		checkSidecarProxies(stdout, spec)
		return nil
	}
	if j.findMax {
		return runFindMax(ctx, r, j.slo, j.sloText, stdout, prog)
	}
	steps, err := r.Run(runCtx)
	prog.finish()
	err = haltResult(runCtx, halt, err, stderr, j.resumeCmd)
	if len(steps) > 0 {
		fmt.Fprintln(stdout)
		opt := tableOptions(stdout, j.wide)
		opt.Hops = spec.Hops
		if terr := report.SweepTable(stdout, spec.BaselineName(), steps, opt); terr != nil {
			return failf("%v", terr)
		}
		if j.extra != nil {
			fmt.Fprintln(stdout)
			if terr := j.extra(stdout, steps); terr != nil {
				return failf("%v", terr)
			}
		}
	}
	if j.note != "" {
		fmt.Fprintf(stdout, "\n%s", report.Wrap(j.note, maxWidth, ""))
	}
	fmt.Fprintf(stdout, "\n%s\n", store.ResultsLine(j.out, fmt.Sprintf("%d of %d steps", results.FinishedSteps(steps), len(plan))))
	checked, cerr := j.check.checkSteps(stdout, steps)
	folded, line := compare.FoldSteps(steps, compare.FailedSteps(steps), len(plan), checked)
	code, err := compare.SweepOutcome(err, cerr, errors.Is(err, context.Canceled), folded)
	switch {
	case code == compare.Interrupted:
		fmt.Fprintln(stderr, compare.InterruptedLine(store.ContinueWith("", j.resumeCmd)))
	case err != nil:
		return failf("%v", err)
	case line != "":
		fmt.Fprintf(stdout, "sweep: %s\n", line)
	}
	return exitWith(code)
}

// pathWhere is where the load of the path named name goes, for a plan
// (sweep.Path.Where).
func pathWhere(spec *sweep.Spec, name string) string {
	p, _ := spec.PathByName(name)
	return p.Where()
}

// liveEvents feeds --prometheus from the sweep's events, then passes them
// on.
func (j sweepJob) liveEvents(next func(sweep.Event)) func(sweep.Event) {
	if j.live == nil {
		return next
	}
	return func(ev sweep.Event) {
		switch ev.Kind {
		case sweep.StepStarted:
			j.live.Step(ev.Step.ID(), ev.Step.Path)
		case sweep.StepLive:
			j.live.Progress(ev.Live)
		case sweep.StepFinished:
			if ev.Result != nil && ev.Result.Run != nil {
				j.live.Finish(metrics.ErrorsByClass(ev.Result.Run.Summary.Errors), ev.Result.Run.Summary.RPS)
			}
		}
		next(ev)
	}
}

// buildStep makes one step's configuration and dialer (sweep.BuildStep)
// and sets the process's GOMAXPROCS for its threads (setProcs).
func buildStep(spec *sweep.Spec, p sweep.Path, st sweep.Step) (loadgen.Config, protocol.Dialer, error) {
	cfg, d, err := sweep.BuildStep(spec, p, st)
	if err == nil {
		setProcs(&cfg, d, st.Rung.Threads, 0)
	}
	return cfg, d, err
}
