// Package live is the live dashboard of a run, a sweep or a distributed
// run (--ui): a State the command feeds once a second (the engine's
// progress, each finished step, the result at the end) and an
// http.Handler that serves a page reading it. The page (page.html, with
// its script and style inline: no other asset, nothing fetched from
// elsewhere) polls a JSON snapshot of the State once a second and draws
// the run over time itself.
//
// Memory is fixed: a run's points over time are at most MaxPoints (pairs
// fold into one when it fills, as the engine's timeline does), a sweep's
// rows at most MaxSteps, the event lines at most MaxEvents. Nothing here
// touches the engine's hot path: the State is fed by the reporter's
// once-a-second callback and by the sweep's events.
package live

import (
	"sync"
	"syscall"
	"time"

	"loadgen/internal/units"
	"loadgen/results"
	"loadgen/results/cost"
	"loadgen/results/hist"
	"loadgen/results/report"
)

// Bounds of what a State keeps.
const (
	MaxPoints = 1200  // a run's points over time; a longer run's span several seconds each
	MaxSteps  = 10000 // a sweep's rows; past it, the oldest go
	MaxEvents = 40    // the last lines of progress a command said
)

// Kinds of command the page shows.
const (
	KindRun    = "run"
	KindSweep  = "sweep"
	KindK8sRun = "k8s run"
)

// RunInfo describes a run (a single run, or a sweep's step) as it
// begins.
type RunInfo struct {
	Label   string        // what is loaded: the target, or the step's ID
	Step    string        // a sweep's step ID; "" for a single run
	Planned time.Duration // the measured window (0: bounded by a request count only)
	Warmup  time.Duration
	// CPUs is what the generator may use (its processors, capped by the
	// CPUs it may run on and its cgroup's quota): its utilization is its
	// CPU time over these. 0: not known, no utilization.
	CPUs float64
	// Asked is an open-loop run's schedule: the rate asked at a time
	// from the start of the measured window. nil in closed loop.
	Asked func(at time.Duration) float64
}

// Progress is one reporting interval of the running run (the engine's
// loadgen.Progress, copied by the command).
type Progress struct {
	Elapsed  time.Duration // since the start of the measured window: the interval's end
	Requests int64         // answered so far in the measured window
	Errors   int64         // failed so far
	RPS      float64       // over the interval
	Latency  *hist.Histogram
}

// State is what the page shows. Its methods are safe for concurrent use.
type State struct {
	mu      sync.Mutex
	version uint64
	kind    string
	title   string
	note    string
	done    bool
	outcome string
	planned int // a sweep's planned steps; 0 unknown (find-max)

	run      *runState // the run going on, or the last one
	steps    []StepRow
	dropped  int // rows dropped past MaxSteps
	events   []string
	eventsAt int // next slot once events is full
	started  time.Time

	// The process's CPU and the machine's at the last progress, for the
	// live utilization.
	cpuAt     time.Time
	cpuSelf   time.Duration
	machine   cost.MachineCPU
	machineOK bool
}

// runState is one run on the page.
type runState struct {
	info    RunInfo
	state   string // starting, running, done, interrupted, aborted, failed
	elapsed time.Duration
	last    Progress // the last progress's counts (its histogram is not kept)
	live    Figures
	final   *Figures
	points  []point
	k       int   // reporting intervals a point holds (1 but for long runs)
	acc     point // the point being gathered when k > 1, of accN intervals
	accN    int
	notes   []string
	paced   bool // the result says open loop (a run begun without its schedule)
}

// point is a record over time: the run's interval and, live, what the
// generator and the machine used in it.
type point struct {
	iv      results.Interval
	asked   float64
	gen     float64 // the generator's utilization of its CPUs; -1 unknown
	machine float64 // the machine's; -1 unknown
}

// New makes the State of a command of a kind (KindRun, KindSweep,
// KindK8sRun), with a title for the page.
func New(kind, title string) *State {
	return &State{kind: kind, title: title, started: time.Now()}
}

// Note sets a line the page shows under its title (what it cannot show,
// say).
func (s *State) Note(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note = text
	s.version++
}

// Planned sets how many steps a sweep plans (0: not known up front).
func (s *State) Planned(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.planned != n {
		s.planned = n
		s.version++
	}
}

// Begin starts a run: the page's figures and chart are its own from now.
func (s *State) Begin(info RunInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run = &runState{info: info, state: "starting", k: 1}
	s.readCPU(time.Now()) // the first interval's utilization counts from here
	s.version++
}

// Progress adds an interval of the running run.
func (s *State) Progress(p Progress) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	if r == nil || r.final != nil {
		return
	}
	cores, machine := s.readCPU(now)
	gen := -1.0 // the generator's utilization of the CPUs it may use
	if r.info.CPUs > 0 && cores >= 0 {
		gen = cores / r.info.CPUs
	}
	from := r.last.Elapsed
	iv := results.Interval{Start: results.Duration(from), Duration: results.Duration(p.Elapsed - from),
		Requests: p.Requests - r.last.Requests, Errors: p.Errors - r.last.Errors, RPS: p.RPS}
	var p50, p99, p999 time.Duration
	if h := p.Latency; h != nil && h.Count() > 0 {
		p50, p99 = h.Quantile(0.5), h.Quantile(0.99)
		if h.Count() >= results.MinP999 {
			p999 = h.Quantile(0.999)
		}
	}
	iv.P50, iv.P99, iv.P999 = results.Duration(p50), results.Duration(p99), results.Duration(p999)
	iv.Outage = iv.IsOutage()
	pt := point{iv: iv, gen: gen, machine: machine}
	if r.info.Asked != nil {
		pt.asked = r.info.Asked(from + (p.Elapsed-from)/2)
	}
	r.push(pt)
	r.state, r.elapsed = "running", p.Elapsed
	r.live = Figures{Requests: p.Requests, Errors: p.Errors, RPS: p.RPS, Asked: pt.asked,
		P50: lat(p50), P99: lat(p99), P999: lat(p999), GenCores: cores, GenUtil: gen, MachineUtil: machine}
	r.live.Flags = liveFlags(gen, machine)
	p.Latency = nil // valid only during the call
	r.last = p
	s.version++
}

// Finish ends the running run with its result: the page's figures become
// the result's, and its chart the result's timeline.
func (s *State) Finish(run *results.Run) {
	if run == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run
	if r == nil {
		r = &runState{k: 1}
		s.run = r
	}
	r.finish(run)
	s.version++
}

// Fail ends the running run without a result (it could not start).
func (s *State) Fail(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.run; r != nil && r.final == nil {
		r.state = "failed"
		r.notes = append(r.notes, why)
		s.version++
	}
}

// Step adds a sweep's finished step to its table. A step of the run on
// the page (by its ID) finishes that run too.
func (s *State) Step(st *results.Step) {
	if st == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.run; r != nil && r.info.Step == st.ID && r.final == nil {
		if st.Run != nil {
			r.finish(st.Run)
		} else {
			r.state = "failed"
			r.notes = append(r.notes, st.Failed)
		}
	}
	if len(s.steps) >= MaxSteps {
		n := copy(s.steps, s.steps[1:])
		s.steps = s.steps[:n]
		s.dropped++
	}
	s.steps = append(s.steps, stepRow(st))
	s.version++
}

// Event adds a line of progress (a distributed run's coordinator says
// what it applies, which Job runs, how a step went).
func (s *State) Event(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) < MaxEvents {
		s.events = append(s.events, line)
	} else {
		s.events[s.eventsAt] = line
		s.eventsAt = (s.eventsAt + 1) % MaxEvents
	}
	s.version++
}

// End says the command is over, and how: "done", "interrupted", "failed:
// …". The page keeps showing the last state.
func (s *State) End(outcome string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done, s.outcome = true, outcome
	if r := s.run; r != nil && r.final == nil && (r.state == "running" || r.state == "starting") {
		r.state = "stopped"
	}
	s.version++
}

// readCPU reads the process's and the machine's CPU and returns what
// they used since the last reading: the process's in cores, the
// machine's as a share of its CPUs; -1 where not known.
func (s *State) readCPU(now time.Time) (self, machine float64) {
	self, machine = -1, -1
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if wall := now.Sub(s.cpuAt).Seconds(); !s.cpuAt.IsZero() && wall > 0 {
			self = max(0, (cpu-s.cpuSelf).Seconds()/wall)
		}
		s.cpuSelf = cpu
	}
	m, err := cost.ReadMachineCPU()
	if err == nil {
		if s.machineOK {
			if c := cost.MachineBetween(s.machine, m); c != nil {
				machine = c.Utilization
			}
		}
		s.machine = m
	}
	s.machineOK = err == nil
	s.cpuAt = now
	return self, machine
}

// liveFlags are the saturation flags of an interval: G when the
// generator used more than results.SaturatedAbove of its CPUs, M when
// the machine's were that busy.
func liveFlags(gen, machine float64) string {
	f := ""
	if gen > results.SaturatedAbove {
		f += "G"
	}
	if machine >= results.SaturatedAbove {
		f += "M"
	}
	return f
}

// push adds an interval: a point of its own, or with a long run's k
// intervals a share of one.
func (r *runState) push(p point) {
	if r.accN == 0 {
		r.acc = p
	} else {
		r.acc.fold(p)
	}
	if r.accN++; r.accN < r.k {
		return
	}
	r.accN = 0
	// A full list folds its points in pairs first.
	if len(r.points) >= MaxPoints {
		r.points = foldPairs(r.points)
		r.k *= 2
	}
	r.points = append(r.points, r.acc)
}

func foldPairs(ps []point) []point {
	out := ps[:0] // written behind where it reads
	for i := 0; i < len(ps); {
		a := ps[i]
		if i+1 < len(ps) && ps[i+1].iv.Warmup == a.iv.Warmup {
			a.fold(ps[i+1])
			i += 2
		} else {
			i++
		}
		out = append(out, a)
	}
	return out
}

// fold merges b, the point after a, into a: the interval as the engine
// folds it, the rates and utilizations as means over the time.
func (a *point) fold(b point) {
	da, db := a.iv.Duration.D().Seconds(), b.iv.Duration.D().Seconds()
	mean := func(x, y float64) float64 {
		switch {
		case x < 0 || y < 0:
			return max(x, y) // one unknown: the other
		case da+db <= 0:
			return (x + y) / 2
		}
		return (x*da + y*db) / (da + db)
	}
	a.asked = mean(a.asked, b.asked)
	a.gen, a.machine = mean(a.gen, b.gen), mean(a.machine, b.machine)
	a.iv.Fold(b.iv)
}

// finish sets the run's result: its figures, and its timeline as the
// points over time, with the utilizations seen live at the same times.
func (r *runState) finish(run *results.Run) {
	sum := run.Summary
	f := &Figures{Requests: sum.Requests, Errors: sum.Errors.Total(), RPS: sum.RPS,
		P50: lat(sum.Latency.P50.D()), P99: lat(sum.Latency.P99.D()), P999: lat(sum.Latency.P999.D()),
		GenCores: report.GeneratorCores(run), GenUtil: run.Generator.Utilization, MachineUtil: -1}
	if p := sum.Pacing; p != nil {
		f.Asked, f.Sent = p.Asked, p.Achieved
		r.paced = true
	}
	if m := run.Machine; m != nil {
		f.MachineUtil = m.Utilization
	}
	if run.Generator.Saturated {
		f.Flags += "G"
	}
	if report.MachineSaturated(run) {
		f.Flags += "M"
	}
	r.final = f
	r.elapsed = sum.Duration.D()
	r.accN = 0
	switch {
	case run.Aborted != "":
		r.state = "aborted"
	case run.Interrupted:
		r.state = "interrupted"
	default:
		r.state = "done"
	}
	r.notes = append(r.notes, run.Notes...)
	if run.Aborted != "" {
		r.notes = append(r.notes, run.Aborted)
	}
	if len(run.Timeline) == 0 {
		return
	}
	live := r.points
	pts := make([]point, 0, min(len(run.Timeline), MaxPoints))
	j := 0
	for _, iv := range run.Timeline {
		p := point{iv: iv, gen: -1, machine: -1}
		switch {
		case iv.Warmup:
		case r.info.Asked != nil:
			p.asked = r.info.Asked(iv.Start.D() + iv.Duration.D()/2)
		case sum.Pacing != nil && run.Config.Schedule == "":
			p.asked = sum.Pacing.Asked // a constant rate
		}
		// The live point that ended when this interval did (within a
		// quarter of a second) lends it its utilizations.
		end := iv.End().D()
		for j < len(live) && live[j].iv.End().D() < end-250*time.Millisecond {
			j++
		}
		if j < len(live) && !iv.Warmup && absDur(live[j].iv.End().D()-end) <= 250*time.Millisecond {
			p.gen, p.machine = live[j].gen, live[j].machine
			if p.asked == 0 {
				p.asked = live[j].asked
			}
		}
		pts = append(pts, p)
	}
	for len(pts) > MaxPoints {
		pts = foldPairs(pts)
	}
	r.points = pts
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// stepRow is a finished step as the page's table shows it.
func stepRow(st *results.Step) StepRow {
	row := StepRow{Index: st.Index, ID: st.ID, Path: st.Path, Rung: st.Rung, Payload: units.FormatBytes(int64(st.Payload)),
		Rate: st.Rate, Repeat: st.Repeat, Failed: st.Failure()}
	row.Flags = (&report.Cell{Steps: []*results.Step{st}}).Flags()
	if run := st.Run; run != nil {
		s := run.Summary
		row.RPS, row.Requests, row.Errors = s.RPS, s.Requests, s.Errors.Total()
		row.P50, row.P99 = lat(s.Latency.P50.D()), lat(s.Latency.P99.D())
		row.Interrupted = run.Interrupted
	}
	var cpu float64
	watched := false
	for _, w := range st.Watched {
		if w.Role != "proxy" || w.NoProxy != "" {
			continue
		}
		if w.Unmeasured != "" {
			row.ProxyNote = w.Name + "'s CPU " + w.Unmeasured
			continue
		}
		cpu += w.CPUMean
		watched = true
	}
	if watched {
		row.ProxyCPU = &cpu
	}
	return row
}
