package compare

import (
	"fmt"
	"slices"
	"strings"

	"loadgen/results"
	"loadgen/results/store"
)

// Comparison is A against B, figure by figure.
type Comparison struct {
	A, B    string // what was compared (file or directory), for the report
	Options Options
	Rows    []Row
	Notes   []string // what makes the comparison doubtful
	// LabelLines say which labels each side carried and by what steps
	// were matched (--label); empty when no run carried labels.
	LabelLines []string
	// MatchedBy is what the steps of two sweeps were matched by: "path,
	// rung, payload and rate", and the labels they share; "" for runs.
	MatchedBy string
}

// Undecided are the rows that got worse beyond Options.MaxRegression
// within what contention for CPU can explain: not decidable.
func (c Comparison) Undecided() []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.Verdict == Contended {
			out = append(out, r)
		}
	}
	return out
}

// Exit is what the comparison comes to: Breached with a regression,
// Undecided with rows contention leaves undecided (unless
// Options.AllowContended), else OK. A nil comparison is OK.
func (c *Comparison) Exit() Exit {
	switch {
	case c == nil:
		return OK
	case len(c.Regressions()) > 0:
		return Breached
	case len(c.Undecided()) > 0 && !c.Options.AllowContended:
		return Undecided
	}
	return OK
}

// Regressions are the rows that got worse beyond Options.MaxRegression.
func (c Comparison) Regressions() []Row {
	var out []Row
	for _, r := range c.Rows {
		if r.Verdict == Regression {
			out = append(out, r)
		}
	}
	return out
}

// metric is a figure compared between runs.
type metric struct {
	name   string
	higher bool // higher is better
	get    func(*results.Run) float64
}

func latencyMetric(name string, q func(results.Latency) results.Duration) metric {
	return metric{name: name, get: func(r *results.Run) float64 { return float64(q(r.Summary.Latency)) }}
}

// compared are the figures a comparison looks at. rps counts what was
// answered without error, so that a B failing fast is not faster.
var compared = []metric{
	{name: "rps", higher: true, get: func(r *results.Run) float64 { return r.Summary.OKPerSec() }},
	latencyMetric("p50", func(l results.Latency) results.Duration { return l.P50 }),
	latencyMetric("p90", func(l results.Latency) results.Duration { return l.P90 }),
	latencyMetric("p95", func(l results.Latency) results.Duration { return l.P95 }),
	latencyMetric("p99", func(l results.Latency) results.Duration { return l.P99 }),
	latencyMetric("p99.9", func(l results.Latency) results.Duration { return l.P999 }),
}

// comparedFor are the figures compared for a protocol: a tcp-stream
// write's "latency" is the time the kernel took a chunk, microseconds of
// noise beside its figure, the throughput (rps is writes/s, bytes alike).
func comparedFor(protocol string) []metric {
	if protocol == "tcp-stream" {
		return compared[:1]
	}
	return compared
}

// judge compares the repeats of one figure.
func judge(m metric, a, b []*results.Run, opt Options) Row {
	var xa, xb []float64
	for _, r := range a {
		xa = append(xa, m.get(r))
	}
	for _, r := range b {
		xb = append(xb, m.get(r))
	}
	return judgeValues(m.name, m.higher, xa, xb, opt)
}

// answered tells whether some request succeeded in one of runs.
func answered(runs []*results.Run) bool {
	for _, r := range runs {
		if r.Summary.OK() > 0 {
			return true
		}
	}
	return false
}

// judgeRuns compares the repeats of one step (or two runs), labelled
// label: every figure, or, when no request succeeded on a side, one row
// that says so — a regression when A's requests succeeded — since
// figures of failures compare nothing.
func judgeRuns(label string, ra, rb []*results.Run, opt Options) []Row {
	okA, okB := answered(ra), answered(rb)
	switch {
	case !okA && !okB:
		return []Row{{Step: label, Metric: "run", Verdict: Missing, Note: "no request succeeded in A or B"}}
	case !okB:
		return []Row{{Step: label, Metric: "run", Verdict: Regression, Note: "no request succeeded in B: " + failures(rb)}}
	case !okA:
		return []Row{{Step: label, Metric: "run", Verdict: Missing, Note: "no request succeeded in A: " + failures(ra)}}
	}
	var rows []Row
	for i, m := range comparedFor(ra[0].Config.Protocol) {
		rows = append(rows, judge(m, ra, rb, opt))
		if i == 0 {
			rows = append(rows, judgeErrors(ra, rb, opt))
		}
	}
	for i := range rows {
		rows[i].Step = label
	}
	return rows
}

// failures names what failed in runs (the first's error classes).
func failures(runs []*results.Run) string {
	for _, r := range runs {
		if r.Summary.Errors.Total() > 0 {
			return fmt.Sprintf("%d failed (%s)", r.Summary.Errors.Total(), r.Summary.Failures())
		}
	}
	return "nothing was answered"
}

// Runs compares run b with run a (the baseline).
func Runs(a, b *results.Run, opt Options) Comparison {
	c := Comparison{Options: opt}
	c.Options.Noise = opt.noise()
	c.Options.ErrorRise = opt.errorRise()
	label := a.Config.Target
	if b.Config.Target != a.Config.Target {
		label = a.Config.Target + " → " + b.Config.Target
	}
	ra, rb := []*results.Run{a}, []*results.Run{b}
	c.Rows = judgeRuns(label, ra, rb, opt)
	contend(c.Rows, contentionOf(ra, rb), ra, rb, opt)
	if d := configDiff(a.Config, b.Config); d != "" {
		c.Notes = append(c.Notes, "A and B were asked different things: "+d)
	}
	c.LabelLines = matchLabels(ra, rb).lines(false)
	c.Notes = append(c.Notes, runNotes("A", []*results.Run{a})...)
	c.Notes = append(c.Notes, runNotes("B", []*results.Run{b})...)
	return c
}

// configDiff lists what differs between two runs' configurations.
func configDiff(a, b results.Config) string {
	var d []string
	diff := func(name string, x, y any) {
		if fmt.Sprint(x) != fmt.Sprint(y) {
			d = append(d, fmt.Sprintf("%s %v vs %v", name, x, y))
		}
	}
	diff("target", a.Target, b.Target)
	diff("protocol", a.Protocol, b.Protocol)
	diff("connections", a.Connections, b.Connections)
	diff("threads", a.Threads, b.Threads)
	diff("streams", a.Streams, b.Streams)
	diff("rate", a.Rate, b.Rate)
	diff("duration", a.Duration, b.Duration)
	diff("body bytes", a.BodyBytes, b.BodyBytes)
	diff("size", a.Size, b.Size)
	diff("new-conn", a.NewConn, b.NewConn)
	diff("tls", a.TLS, b.TLS)
	return strings.Join(d, ", ")
}

// runNotes warns of runs whose figures may not measure the target.
func runNotes(side string, runs []*results.Run) []string {
	var sat, intr int
	for _, r := range runs {
		if r.Generator.Saturated {
			sat++
		}
		if r.Interrupted {
			intr++
		}
	}
	var out []string
	what := func(n int) string {
		if len(runs) == 1 {
			return "the run"
		}
		return fmt.Sprintf("%d of %d runs", n, len(runs))
	}
	if sat > 0 {
		out = append(out, fmt.Sprintf("%s: the generator was saturated in %s: figures may measure loadgen, not the target", side, what(sat)))
	}
	if intr > 0 {
		out = append(out, fmt.Sprintf("%s: %s stopped early", side, what(intr)))
	}
	return out
}

// cell is the repeats of one step of a sweep.
type cell struct {
	label string
	steps []*results.Step
}

func (c *cell) runs() []*results.Run {
	var out []*results.Run
	for _, st := range c.steps {
		if st.Run != nil {
			out = append(out, st.Run)
		}
	}
	return out
}

func (c *cell) failure() string {
	for _, st := range c.steps {
		if st.Failed != "" {
			return st.Failed
		}
	}
	return "no run"
}

// cells groups steps by path, rung, payload, rate and the labels m
// matches on, in first-seen order.
func cells(steps []*results.Step, m labelMatch) (map[string]*cell, []string) {
	byKey := map[string]*cell{}
	var order []string
	for _, st := range steps {
		l := m.of(st)
		k := fmt.Sprintf("%s|%s|%d|%g|%s", st.Path, st.Rung, st.Payload, st.Rate, l)
		c := byKey[k]
		if c == nil {
			c = &cell{label: stepLabel(st)}
			if l != "" {
				c.label += " " + l
			}
			byKey[k] = c
			order = append(order, k)
		}
		c.steps = append(c.steps, st)
	}
	return byKey, order
}

// stepLabel names a step without its repeat: "nginx c4t4 1KiB", with
// " 2000/s" in open loop.
func stepLabel(st *results.Step) string {
	s := fmt.Sprintf("%s %s %s", st.Path, st.Rung, sizeLabel(st.Payload))
	if st.Rate > 0 {
		s += " " + exact(st.Rate) + "/s"
	}
	return s
}

func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// Steps compares the steps of sweep b with those of sweep a, matched by
// path, rung, payload and rate; the repeats of a step are judged together.
// A step that ran in A but failed in every repeat of B is a regression.
func Steps(a, b []*results.Step, opt Options) Comparison {
	c := Comparison{Options: opt}
	c.Options.Noise = opt.noise()
	c.Options.ErrorRise = opt.errorRise()
	m := matchLabels(stepRuns(a), stepRuns(b))
	c.LabelLines = m.lines(true)
	c.MatchedBy = m.by()
	ca, orderA := cells(a, m)
	cb, orderB := cells(b, m)
	var allA, allB []*results.Run
	for _, k := range orderA {
		x, y := ca[k], cb[k]
		if y == nil {
			c.Rows = append(c.Rows, Row{Step: x.label, Metric: "run", Verdict: Missing, Note: "not in B"})
			continue
		}
		ra, rb := x.runs(), y.runs()
		allA, allB = append(allA, ra...), append(allB, rb...)
		switch {
		case len(ra) == 0 && len(rb) == 0:
			c.Rows = append(c.Rows, Row{Step: x.label, Metric: "run", Verdict: Missing, Note: "failed in A and B: " + y.failure()})
		case len(rb) == 0:
			c.Rows = append(c.Rows, Row{Step: x.label, Metric: "run", Verdict: Regression, Note: "failed in B: " + y.failure()})
		case len(ra) == 0:
			c.Rows = append(c.Rows, Row{Step: x.label, Metric: "run", Verdict: Missing, Note: "failed in A: " + x.failure()})
		default:
			rows := judgeRuns(x.label, ra, rb, opt)
			if rows[0].Metric != "run" { // else no figures to compare, nor costs per request
				for _, row := range costRows(x.steps, y.steps, opt) {
					row.Step = x.label
					rows = append(rows, row)
				}
			}
			contend(rows, contentionOf(ra, rb), ra, rb, opt)
			c.Rows = append(c.Rows, rows...)
		}
	}
	for _, k := range orderB {
		if ca[k] == nil {
			c.Rows = append(c.Rows, Row{Step: cb[k].label, Metric: "run", Verdict: Missing, Note: "not in A"})
		}
	}
	c.Notes = append(c.Notes, runNotes("A", allA)...)
	c.Notes = append(c.Notes, runNotes("B", allB)...)
	return c
}

func stepRuns(steps []*results.Step) []*results.Run {
	var out []*results.Run
	for _, st := range steps {
		if st.Run != nil {
			out = append(out, st.Run)
		}
	}
	return out
}

// Sweeps compares the sweep in results directory bDir with the one in aDir.
func Sweeps(aDir, bDir string, opt Options) (Comparison, error) {
	_, a, err := store.ReadSweep(aDir)
	if err != nil {
		return Comparison{}, err
	}
	_, b, err := store.ReadSweep(bDir)
	if err != nil {
		return Comparison{}, err
	}
	c := Steps(a, b, opt)
	c.A, c.B = aDir, bDir
	return c, nil
}

// Matched tells whether any figure was compared (some step is in A and B
// with runs on both sides).
func (c Comparison) Matched() bool {
	for _, r := range c.Rows {
		if r.Note == "" || r.Verdict == Regression {
			return true
		}
	}
	return false
}

// costRows compare what the processes watched on both sides cost: CPU
// cores per 1000 requests/s (a B that serves fewer requests is not cheaper
// for it), and memory in MiB. Lower is better.
func costRows(a, b []*results.Step, opt Options) []Row {
	var rows []Row
	for _, name := range watchedNames(a) {
		cpuA, memA := costs(a, name)
		cpuB, memB := costs(b, name)
		if len(cpuA) > 0 && len(cpuB) > 0 {
			rows = append(rows, judgeValues("cpu/1k."+name, false, cpuA, cpuB, opt))
		}
		if len(memA) > 0 && len(memB) > 0 {
			rows = append(rows, judgeValues("MiB."+name, false, memA, memB, opt))
		}
	}
	return rows
}

// watchedNames are the process sets watched in steps, in order.
func watchedNames(steps []*results.Step) []string {
	var out []string
	for _, st := range steps {
		for _, w := range st.Watched {
			if !slices.Contains(out, w.Name) {
				out = append(out, w.Name)
			}
		}
	}
	return out
}

// costs are, over the repeats that ran and watched name, its CPU cores
// per 1000 requests/s and its memory in MiB.
func costs(steps []*results.Step, name string) (cpuPer1k, mib []float64) {
	for _, st := range steps {
		if st.Run == nil {
			continue
		}
		for _, w := range st.Watched {
			if w.Name != name {
				continue
			}
			if rps := st.Run.Summary.RPS; rps > 0 && w.Samples > 0 {
				cpuPer1k = append(cpuPer1k, w.CPUMean/(rps/1000))
			}
			if w.Samples > 0 {
				mib = append(mib, float64(w.MemMean)/(1<<20))
			}
		}
	}
	return cpuPer1k, mib
}
