package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"loadgen/internal/units"
	"loadgen/loadgen"
	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// abortFlags are --abort-on-fail and --abort-after of run and sweep, and
// sweep's --keep-going: stop a run as soon as an --assert breaks, as k6's
// abortOnFail. What breaks is results/compare's judgement (Breach) of the
// engine's window of the run (Config.Judge).
type abortFlags struct {
	on        bool
	after     time.Duration
	keepGoing bool

	fl   *pflag.FlagSet
	live []compare.Assertion // the assertions judged while the run goes on
}

// abortUsage is --abort-on-fail's help: the engine judges after each
// interval (loadgen.DefaultInterval) the last loadgen.DefaultJudgeWindow.
var abortUsage = fmt.Sprintf("stop as soon as an --assert breaks (k6's abortOnFail), write what was measured, marked aborted, and exit %d: "+
	"judged %s over the last %g s (rps, latencies, errors and timeouts as a share) or the run so far (a count of errors or timeouts, which only grows), "+
	"from --abort-after on; %s are judged at the end only",
	int(compare.Aborted), every(loadgen.DefaultInterval), loadgen.DefaultJudgeWindow.Seconds(), compare.JudgedAtEnd)

// every says how often, in the help: "every second", "every 2s".
func every(d time.Duration) string {
	if d == time.Second {
		return "every second"
	}
	return "every " + units.FormatDuration(d)
}

func (a *abortFlags) register(fl *pflag.FlagSet, sweep bool) {
	a.fl = fl
	usage := abortUsage
	if sweep {
		usage = strings.Replace(usage, "stop as soon as", "stop a step as soon as", 1) + "; the sweep stops at that step (see --keep-going)"
	}
	fl.BoolVar(&a.on, "abort-on-fail", false, usage)
	window := units.FormatDuration(loadgen.DefaultJudgeWindow) // the engine judges no earlier
	durationVarP(fl, &a.after, "abort-after", "", 0,
		"with --abort-on-fail: how far into the measured window (after --warmup, which is never judged) assertions are first judged; at least the window, "+
			window+" (default "+window+")")
	if sweep {
		fl.BoolVar(&a.keepGoing, "keep-going", false, "with --abort-on-fail: go on with the rest of the sweep after a step aborted (by default the sweep stops at it)")
	}
}

// parse checks the flags against the parsed assertions, before any load.
func (a *abortFlags) parse(check *checkFlags, findMax bool) (err error) {
	given := func(name string) bool { return a.fl != nil && a.fl.Lookup(name) != nil && a.fl.Changed(name) }
	a.live, err = compare.ParseAbort(a.on, a.after, given, findMax, check.parsed)
	return err
}

// apply makes the engine judge the run every interval.
func (a *abortFlags) apply(cfg *loadgen.Config) {
	if a == nil || !a.on {
		return
	}
	live := a.live
	cfg.JudgeWindow, cfg.JudgeAfter = loadgen.DefaultJudgeWindow, a.after
	cfg.Judge = func(w loadgen.Window) string {
		return compare.Breach(live, &results.Run{Summary: w.Recent}, &results.Run{Summary: w.SoFar}, w.From, w.To)
	}
}

// halting wraps the sweep's context so that it stops after a step that
// aborted; no Halt (nil) without --abort-on-fail or with --keep-going.
func (a *abortFlags) halting(ctx context.Context) (context.Context, *sweep.Halt) {
	if a == nil || !a.on || a.keepGoing {
		return ctx, nil
	}
	return sweep.NewHalt(ctx)
}

// haltResult is the sweep's error once it stopped at an aborted step: none
// (the step counts as failed), after saying so; err as it was otherwise.
func haltResult(ctx context.Context, h *sweep.Halt, err error, stderr io.Writer, again string) error {
	step, why, ok := h.Stopped(ctx, err)
	if !ok {
		return err
	}
	fmt.Fprintf(stderr, "sweep: step %s %s: the sweep stopped there (--keep-going runs the rest); %s\n",
		step, why, store.ContinueWith("", again))
	return nil
}
