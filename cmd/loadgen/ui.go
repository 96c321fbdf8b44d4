package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"loadgen/loadgen"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s/run"
	"loadgen/results"
	"loadgen/results/live"
)

// uiFlags are --ui and --ui-linger: the live dashboard (results/live)
// of run, sweep and k8s run.
type uiFlags struct {
	addr   string
	linger time.Duration

	state  *live.State
	srv    *http.Server
	url    string    // where the dashboard is served
	stderr io.Writer // where --ui-linger says it waits
}

func (u *uiFlags) register(fl *pflag.FlagSet, what string) {
	fl.StringVar(&u.addr, "ui", "", "serve a live dashboard of the "+what+" on ADDR, e.g. 127.0.0.1:8089 (a bare :PORT is loopback's)")
	durationVarP(fl, &u.linger, "ui-linger", "", 0, "with --ui: keep the dashboard's final state served this long after the "+what+", e.g. 5m (Ctrl-C ends it)")
}

// start serves the dashboard of a command of kind with title. Failing to
// listen is a usage error, before any load. Without --ui it does nothing
// and the State is nil.
func (u *uiFlags) start(kind, title string, stderr io.Writer) (*live.State, error) {
	if u.addr == "" {
		return nil, nil
	}
	if err := live.CheckLinger(u.linger); err != nil {
		return nil, err
	}
	ln, loopback, err := live.Listen(u.addr)
	if err != nil {
		return nil, fmt.Errorf("--ui %s: %w", u.addr, err)
	}
	st := live.New(kind, title)
	u.state = st
	u.srv = servePage(ln, live.Handler(st, live.Options{AnyHost: !loopback}), "--ui", stderr)
	u.url, u.stderr = "http://"+ln.Addr().String()+"/", stderr
	fmt.Fprintf(stderr, "live dashboard on %s\n", u.url)
	if !loopback {
		fmt.Fprintf(stderr, "loadgen: --ui %s is not a loopback address: whoever reaches it sees the %s's targets and figures\n", u.addr, kind)
	}
	return st, nil
}

// done says how the command ended, keeps the final state served for
// --ui-linger (Ctrl-C, ctx, ends that wait) and stops serving. It returns
// err as it was: the dashboard never changes how a command exits.
func (u *uiFlags) done(ctx context.Context, err error) error {
	if u.state == nil {
		return err
	}
	status, _ := exitStatus(err)
	u.state.End(live.Outcome(err, status))
	linger(ctx, u.linger, u.stderr, fmt.Sprintf("loadgen: --ui-linger: the dashboard stays on %s for %s (Ctrl-C ends it)", u.url, u.linger))
	u.srv.Close()
	u.state, u.srv = nil, nil
	return err
}

// runInfo describes a run about to start for the dashboard: cfg after
// setProcs (its Procs are the generator's).
func runInfo(label, step string, cfg loadgen.Config) live.RunInfo {
	info := live.RunInfo{Label: label, Step: step, Planned: cfg.Duration.D(), Warmup: cfg.Warmup.D(), CPUs: cfg.AllowedCPUs()}
	if cfg.Pacer != nil {
		info.Asked = cfg.AskedRate
	}
	return info
}

// uiProgress is the engine's progress as the dashboard takes it.
func uiProgress(p loadgen.Progress) live.Progress {
	return live.Progress{Elapsed: p.Elapsed, Requests: p.Requests, Errors: p.Errors, RPS: p.RPS, Latency: p.Latency}
}

// runUI feeds --ui from a run: it begins the run on the page and chains
// the engine's progress into it. Without --ui it does nothing.
func (u *uiFlags) runUI(cfg *loadgen.Config, label string) {
	st := u.state
	if st == nil {
		return
	}
	st.Begin(runInfo(label, "", *cfg))
	cfg.LiveLatency = true
	next := cfg.Progress
	cfg.Progress = func(p loadgen.Progress) {
		st.Progress(uiProgress(p))
		if next != nil {
			next(p)
		}
	}
}

// uiFinish gives the page the run's result, or why there is none.
func (u *uiFlags) uiFinish(r *results.Run, err error) {
	switch {
	case u.state == nil:
	case r != nil:
		u.state.Finish(r)
	case err != nil:
		u.state.Fail(err.Error())
	}
}

// sweepEvents feeds --ui from a sweep's events, then passes them on.
func sweepEvents(st *live.State, next func(sweep.Event)) func(sweep.Event) {
	if st == nil {
		return next
	}
	return func(ev sweep.Event) {
		switch ev.Kind {
		case sweep.StepStarted:
			st.Planned(ev.Total)
		case sweep.StepLive:
			st.Progress(uiProgress(ev.Live))
		case sweep.StepFinished, sweep.StepSkipped:
			if ev.Result != nil {
				st.Step(ev.Result)
			}
		}
		next(ev)
	}
}

// sweepStepUI begins a sweep's step on the page, once its configuration
// is built (its processors set).
func sweepStepUI(st *live.State, cfg *loadgen.Config, step sweep.Step) {
	if st == nil {
		return
	}
	cfg.LiveLatency = true
	st.Begin(runInfo(step.Label(), step.ID(), *cfg))
}

// k8sUI feeds --ui from a distributed run: the coordinator's lines of
// progress, and each step as it finishes (Coordinator.OnStep).
func k8sUI(st *live.State, co *run.Coordinator) {
	if st == nil {
		return
	}
	st.Planned(len(co.Steps))
	st.Note("The steps run on the cluster's workers, which report only when their Job ends: the table fills in " +
		"step by step, and no per-second data of a step is available while it runs (its result's timeline is in the results directory).")
	say := co.Events
	co.Events = func(format string, a ...any) {
		st.Event(fmt.Sprintf(format, a...))
		if say != nil {
			say(format, a...)
		}
	}
	co.OnStep = func(s *results.Step) {
		if s.Run != nil {
			// The page's figures and chart: the last finished step's.
			st.Begin(live.RunInfo{Label: sweep.Label(s.Path, s.Rung, s.Payload), Step: s.ID,
				Planned: s.Run.Config.Duration.D(), Warmup: s.Run.Config.Warmup.D()})
		}
		st.Step(s)
	}
}

// startUI serves --ui for a run and feeds it the run's progress.
func (f *runFlags) startUI(cfg *loadgen.Config, stderr io.Writer) error {
	label := live.Target(cfg.Target)
	if f.targets != "" {
		label = "--targets " + f.targets
	}
	if _, err := f.ui.start(live.KindRun, "run "+label, stderr); err != nil {
		return err
	}
	f.ui.runUI(cfg, label)
	return nil
}

// startUI serves --ui for a sweep (not for a dry run, which sends
// nothing).
func (f *sweepFlags) startUI(spec *sweep.Spec, stderr io.Writer) error {
	if f.dryRun {
		return nil
	}
	title := fmt.Sprintf("sweep: %s, results in %s", plural(len(spec.Plan()), "step"), f.out)
	if f.findMax {
		title = fmt.Sprintf("sweep --find-max --slo '%s', results in %s", f.slo, f.out)
	}
	_, err := f.ui.start(live.KindSweep, title, stderr)
	return err
}

// startUI serves --ui for a distributed run and feeds it the
// coordinator's progress and steps.
func (f *k8sRunFlags) startUI(co *run.Coordinator, stderr io.Writer) error {
	title := fmt.Sprintf("k8s run: mesh %s, %s of %s, results in %s", f.opts.Mesh, plural(len(co.Steps), "step"),
		plural(f.workers, "worker"), f.out)
	st, err := f.ui.start(live.KindK8sRun, title, stderr)
	k8sUI(st, co)
	return err
}
