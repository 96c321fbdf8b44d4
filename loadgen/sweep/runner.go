package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/store"
)

// Probes start resource samplers: CostProbes, results/cost's (tests pass
// their own).
type Probes interface {
	// Check tells whether the selection exists now (before any load).
	Check(selector string) error
	// Start samples the selection until the returned stop is called.
	Start(selector string) (stop func() results.ProcessCost, err error)
}

// Build makes the engine's configuration and dialer for one step.
type Build func(ctx context.Context, p Path, st Step) (loadgen.Config, protocol.Dialer, error)

// Runner runs a sweep into a results directory.
type Runner struct {
	Spec   *Spec
	Dir    string
	Resume bool
	Build  Build
	Probes Probes      // may be nil: nothing is watched
	Events func(Event) // progress; called from Run's goroutine or the engine's reporter
	// After, when set, is asked after each step's run whether the step
	// stands: an error fails it (its result is kept), as when a path's
	// proxy died during the step.
	After func(p Path, st Step) error
	// SLO is what FindMax's objective says ("p99<10ms"), for findmax.json.
	SLO string

	// runProbe runs one step of FindMax; nil is runStep. Tests replace it
	// to make a probe noisy.
	runProbe func(ctx context.Context, st Step, ev Event) *results.Step
}

// EventKind tells what an Event reports.
type EventKind int

const (
	StepStarted EventKind = iota
	StepLive              // once a second during a step
	StepFinished
	StepSkipped // already complete in the results directory (--resume)
)

// Event is progress for people: which step, how far, how it went.
type Event struct {
	Kind   EventKind
	Step   Step
	N      int // steps done before this one
	Total  int
	ETA    time.Duration
	Live   loadgen.Progress
	Result *results.Step

	// FindMax: Total is 0 (how many probes a search takes is not known
	// up front); Search is which path × rung × payload is searched, of
	// Searches, and Probe is a finished probe's verdict.
	Search, Searches int
	Probe            *Probe
}

// ManifestFile and StepsDir lay out a results directory.
const (
	ManifestFile = store.ManifestFile
	StepsDir     = store.StepsDir
)

// Check reports, before any load, what would stop the sweep: a results
// directory that already holds a sweep (without Resume), or a process to
// watch that does not exist.
func (r *Runner) Check() error {
	if err := CheckOut(r.Dir, r.Resume); err != nil {
		return err
	}
	return r.checkWatches()
}

// CheckOut is the refusal of the results directory dir before anything
// starts, or nil: one that already holds a sweep (Exists), unless the run
// resumes it. One rule for sweep, size, lab and the Runner.
func CheckOut(dir string, resume bool) error {
	if !resume && Exists(dir) {
		return Occupied(dir)
	}
	return nil
}

// Exists tells whether dir holds a sweep: its manifest, written before
// its first step.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestFile))
	return err == nil
}

// Run runs every step not yet complete and returns all the steps of the
// plan that have a result, in plan order. Ctrl-C (ctx) stops it after the
// current step, whose partial result is kept (marked interrupted, re-run on
// resume). An unreachable path fails its steps, not the sweep.
func (r *Runner) Run(ctx context.Context) ([]*results.Step, error) {
	plan := r.Spec.Plan()
	if err := r.prepare(plan); err != nil {
		return nil, err
	}
	if err := r.checkWatches(); err != nil {
		return nil, err
	}
	var out []*results.Step
	per := r.Spec.StepTime()
	left := len(plan)
	for i, st := range plan {
		if ctx.Err() != nil {
			break
		}
		ev := Event{Step: st, N: i, Total: len(plan), ETA: time.Duration(left) * per}
		if prev := r.complete(st); prev != nil {
			out = append(out, prev)
			left--
			ev.Kind, ev.Result = StepSkipped, prev
			r.emit(ev)
			continue
		}
		ev.Kind = StepStarted
		r.emit(ev)
		res := r.runStep(ctx, st, ev)
		// A path whose answers are not its baseline's kind at this step (a
		// redirect where the baseline answered 200) fails, whichever of the
		// two ran first: the one that ran before is written again.
		again := results.FailStatusMixes(append(slices.Clip(out), res))
		if err := store.WriteJSON(r.stepFile(st), res); err != nil {
			// Still returned, so that it is printed: measured, not saved.
			return append(out, res), fmt.Errorf("step %s: %w (its result is printed above but not saved; the steps before it are saved)", st.ID(), err)
		}
		for _, prev := range again {
			if prev == res {
				continue
			}
			if err := store.WriteJSON(filepath.Join(r.Dir, StepsDir, prev.ID+".json"), prev); err != nil {
				return append(out, res), fmt.Errorf("step %s: %w", prev.ID, err)
			}
		}
		out = append(out, res)
		left--
		ev.Kind, ev.Result, ev.ETA = StepFinished, res, time.Duration(left)*per
		r.emit(ev)
	}
	return out, ctx.Err()
}

func (r *Runner) emit(e Event) {
	if r.Events != nil {
		r.Events(e)
	}
}

func (r *Runner) stepFile(st Step) string {
	return filepath.Join(r.Dir, StepsDir, st.ID()+".json")
}

// prepare creates the results directory and its manifest, or, resuming,
// checks that the directory holds the same sweep. A nil plan (find-max)
// has no fixed steps.
func (r *Runner) prepare(plan []Step) error {
	ids := make([]string, len(plan))
	for i, st := range plan {
		ids[i] = st.ID()
	}
	m, err := readManifest(r.Dir)
	if err == nil {
		if !r.Resume {
			return Occupied(r.Dir)
		}
		return sameSweep(r.Dir, m, r.Spec, plan != nil, ids)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, StepsDir), 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return r.writeManifest(ids)
}

// readManifest reads the manifest of the sweep in dir; an error wrapping
// os.ErrNotExist when there is none.
func readManifest(dir string) (*results.Manifest, error) {
	mpath := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return nil, err
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v), so the sweep there cannot be resumed: its steps are in %s; choose another -o", mpath, err, filepath.Join(dir, StepsDir))
	}
	if m.Schema > results.SchemaVersion {
		return nil, fmt.Errorf("%s: schema %d is newer than this loadgen understands: upgrade loadgen", mpath, m.Schema)
	}
	return &m, nil
}

// sameSweep tells whether spec (with the plan ids, when planned) continues
// the sweep of manifest m in dir: the same steps and settings.
func sameSweep(dir string, m *results.Manifest, spec *Spec, planned bool, ids []string) error {
	if planned && !reflect.DeepEqual(m.Steps, ids) {
		return fmt.Errorf("%s: the sweep there has another plan than this one: resume it with the same file and flags, or choose another -o", dir)
	}
	if d := settingsDiff(m.Spec, spec); d != "" {
		return fmt.Errorf("%s: the sweep there was run with other settings (%s): its steps and the ones to come would not compare; resume it with the same file and flags, or choose another -o", dir, d)
	}
	return nil
}

// CheckResume tells, before anything is started for it, whether spec
// continues the sweep in dir (the same steps and settings: where its
// paths are may differ) or why not. A find-max search (findMax) has no
// fixed steps; only its settings are compared.
func CheckResume(dir string, spec *Spec, findMax bool) error {
	m, err := readManifest(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--resume: %s holds no sweep (no %s): drop --resume to start one there", dir, ManifestFile)
		}
		return err
	}
	var ids []string
	if !findMax {
		for _, st := range spec.Plan() {
			ids = append(ids, st.ID())
		}
	}
	return sameSweep(dir, m, spec, !findMax, ids)
}

// Saved is the spec the sweep in dir was started with, from its manifest,
// for a resume that names no sweep of its own. Where its paths went then
// (a sidecar path's pods and proxies, chosen anew each run) is cleared.
func Saved(dir string) (*Spec, error) {
	m, err := readManifest(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--resume: %s holds no sweep (no %s): drop --resume to start one there", dir, ManifestFile)
		}
		return nil, err
	}
	if len(m.Spec) == 0 {
		return nil, fmt.Errorf("--resume: %s does not record the sweep's plan (an older loadgen wrote it): give the same -f or flags it was started with", filepath.Join(dir, ManifestFile))
	}
	var s Spec
	if err := json.Unmarshal(m.Spec, &s); err != nil {
		return nil, fmt.Errorf("--resume: the plan in %s cannot be read (%v): give the same -f or flags it was started with", filepath.Join(dir, ManifestFile), err)
	}
	for i := range s.Paths {
		if p := &s.Paths[i]; p.Sidecar != nil {
			p.URL, p.NetNS, p.Watch, p.Workers = "", "", nil, 0
		}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("--resume: the plan in %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &s, nil
}

// settingsDiff names the settings in which the spec a sweep was started
// with (the manifest's, JSON) differs from spec: what a step measures —
// duration, warm-up, timeout, protocol, endpoint, rates, each path's
// options, a built-in sweep's key type when the stored spec records it —
// but not where the paths are (URLs, network namespaces, watches, CA files
// and sidecars' workers), which the built-in sweeps and local sidecars
// choose anew on every run. Empty when they agree or the stored spec
// cannot be read (an older manifest).
func settingsDiff(stored json.RawMessage, spec *Spec) string {
	var was Spec
	if len(stored) == 0 || json.Unmarshal(stored, &was) != nil {
		return ""
	}
	a, b := settingsOf(was), settingsOf(*spec)
	if a.KeyType == "" {
		b.KeyType = "" // an older loadgen did not record it
	}
	var d []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			d = append(d, name)
		}
	}
	return strings.Join(d, ", ")
}

// settingsOf is s without where its paths are (a path's CA file and
// client certificate too: a built-in sweep makes its certificates anew on
// every run).
func settingsOf(s Spec) Spec {
	s.Target, s.Builtin = nil, ""
	paths := make([]Path, len(s.Paths))
	for i, p := range s.Paths {
		p.URL, p.Watch, p.NetNS, p.CACert, p.Cert, p.Key = "", nil, "", "", "", ""
		if p.Sidecar != nil {
			p.Workers = 0
		}
		paths[i] = p
	}
	s.Paths = paths
	return s
}

// writeManifest writes the manifest with these step IDs.
func (r *Runner) writeManifest(ids []string) error {
	m, err := r.Spec.Manifest()
	if err != nil {
		return err
	}
	m.Schema, m.Tool, m.Kind, m.Created, m.Steps = results.SchemaVersion, "loadgen", "sweep", time.Now().UTC(), ids
	return store.WriteJSON(filepath.Join(r.Dir, ManifestFile), m)
}

// checkWatches makes sure every process to watch exists before any load.
func (r *Runner) checkWatches() error {
	if r.Probes == nil {
		return nil
	}
	if w := r.Spec.Target; w != nil {
		if err := r.Probes.Check(w.Selector()); err != nil {
			return fmt.Errorf("target watch: %w", err)
		}
	}
	for _, p := range r.Spec.Paths {
		if p.Watch != nil {
			if err := r.Probes.Check(p.Watch.Selector()); err != nil {
				return fmt.Errorf("path %s: watch: %w", p.Name, err)
			}
		}
	}
	return nil
}

// complete returns the step's saved result when it is complete: a run that
// was not interrupted. Failed and interrupted steps run again.
func (r *Runner) complete(st Step) *results.Step {
	if !r.Resume {
		return nil
	}
	res, err := store.ReadStep(r.stepFile(st))
	if err != nil || res.Run == nil || res.Run.Interrupted || res.ID != st.ID() {
		return nil
	}
	return res
}

// runStep runs one step and samples the watched processes over its
// measured window, less the last second.
func (r *Runner) runStep(ctx context.Context, st Step, ev Event) *results.Step {
	p, _ := r.Spec.PathByName(st.Path)
	res := &results.Step{
		Schema: results.SchemaVersion, Tool: "loadgen", Index: st.Index, ID: st.ID(),
		Path: st.Path, Baseline: p.Baseline, Rung: st.Rung.String(), Connections: st.Rung.Connections,
		Threads: st.Rung.Threads, Payload: st.Payload, Rate: st.Rate, Repeat: st.Repeat, Workers: p.Workers,
	}
	cfg, d, err := r.Build(ctx, p, st)
	if err != nil {
		res.Failed = err.Error()
		return res
	}
	type watch struct{ name, sel, role string }
	var watches []watch
	if p.Watch != nil {
		watches = append(watches, watch{p.Watch.Label(), p.Watch.Selector(), "proxy"})
	}
	if w := r.Spec.Target; w != nil {
		watches = append(watches, watch{"target", w.Selector(), "target"})
	}
	windows := make(chan [2]time.Time, 1)
	cfg.Window = func(start, end time.Time) { windows <- [2]time.Time{start, end} }
	if r.Events != nil {
		cfg.Progress = func(pr loadgen.Progress) {
			e := ev
			e.Kind, e.Live = StepLive, pr
			r.emit(e)
		}
	}
	runDone := make(chan struct{})
	costs := make(chan []results.ProcessCost, 1)
	go func() {
		var out []results.ProcessCost
		defer func() { costs <- out }()
		if r.Probes == nil || len(watches) == 0 {
			return
		}
		var w [2]time.Time
		select {
		case w = <-windows:
		case <-runDone:
			return
		}
		from, to := r.Spec.CostWindow(w[0], w[1])
		if !sleepUntil(from, runDone) {
			return
		}
		stops := make([]func() results.ProcessCost, len(watches))
		began := time.Now()
		for i, wt := range watches {
			if stop, err := r.Probes.Start(wt.sel); err == nil {
				stops[i] = stop
			}
		}
		sleepUntil(to, runDone)
		ended := time.Now()
		for i, stop := range stops {
			if stop == nil {
				continue
			}
			c := stop()
			c.Name, c.Selector, c.Role = watches[i].name, watches[i].sel, watches[i].role
			c.Covered, c.CoveredFrom, c.CoveredTo = ended.Sub(began).Seconds(), &began, &ended
			out = append(out, c)
		}
	}()
	run, err := loadgen.Run(ctx, cfg, d)
	close(runDone)
	watched := <-costs
	if err != nil {
		res.Failed = err.Error()
		res.Interrupted = ctx.Err() != nil // Ctrl-C before the load began (a connect it cancelled)
		return res
	}
	res.Run = run
	if r.After != nil {
		if err := r.After(p, st); err != nil {
			res.Failed = err.Error()
		}
	}
	rps := run.Summary.RPS
	for i := range watched {
		if rps > 0 {
			watched[i].CPUPer1kRPS = watched[i].CPUMean / (rps / 1000)
			watched[i].MiBPer1kRPS = float64(watched[i].MemMean) / (1 << 20) / (rps / 1000)
		}
	}
	res.Watched = watched
	return res
}

// sleepUntil waits until t; false when stop closed first.
func sleepUntil(t time.Time, stop <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-stop:
		return false
	}
}
