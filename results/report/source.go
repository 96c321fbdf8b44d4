package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"loadgen/results"
	"loadgen/results/store"
)

// Sweep is what the reporters of this file's siblings read: one sweep's
// results (its manifest and the steps written so far, in plan order), or
// a single run given on its own, wrapped as a sweep of one step by
// SingleRun. Reading files is the caller's job (results/store).
type Sweep struct {
	Name     string            // the directory or file it was read from
	Manifest *results.Manifest // nil for a single run
	Steps    []*results.Step
}

// SingleRun wraps one run as a one-step sweep, so every reporter reads
// runs and sweeps alike. Its path is named after the file (run.json →
// "run").
func SingleRun(name string, run *results.Run) *Sweep {
	c := run.Config
	path := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if path == "" || path == "." || path == "/" {
		path = "run"
	}
	payload := c.Size
	if payload == 0 {
		payload = c.BodyBytes
	}
	rung := fmt.Sprintf("c%dt%d", c.Connections, c.Threads)
	return &Sweep{Name: name, Steps: []*results.Step{{
		Schema: run.Schema, Tool: run.Tool, ID: path, Path: path, Rung: rung,
		Connections: c.Connections, Threads: c.Threads, Payload: payload, Rate: c.Rate, Repeat: 1, Run: run,
	}}}
}

// Single tells whether s is one run rather than a sweep.
func (s *Sweep) Single() bool { return s.Manifest == nil }

// Baseline is the name of the baseline path, or "" when none is marked.
func (s *Sweep) Baseline() string {
	if s.Manifest != nil && s.Manifest.Baseline != "" {
		return s.Manifest.Baseline
	}
	for _, st := range s.Steps {
		if st.Baseline {
			return st.Path
		}
	}
	return ""
}

// Hops is how many targets each request of the sweep crossed (its spec's
// hops: a chain of targets), 1 when it says none.
func (s *Sweep) Hops() int {
	if s.Manifest == nil || len(s.Manifest.Spec) == 0 {
		return 1
	}
	var spec struct {
		Hops int `json:"hops"`
	}
	if json.Unmarshal(s.Manifest.Spec, &spec) != nil || spec.Hops < 1 {
		return 1
	}
	return spec.Hops
}

// Paths are the sweep's path names in plan order (the manifest's, then
// any only its steps name).
func (s *Sweep) Paths() []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if s.Manifest != nil {
		for _, p := range s.Manifest.Paths {
			add(p)
		}
	}
	for _, st := range s.Steps {
		add(st.Path)
	}
	return out
}

// Protocol is the protocol the sweep drove, from its spec or first run.
func (s *Sweep) Protocol() string {
	if p := s.spec().Protocol; p != "" {
		return p
	}
	for _, st := range s.Steps {
		if st.Run != nil {
			return st.Run.Config.Protocol
		}
	}
	return ""
}

// Env is where the sweep ran: the manifest's, or the first run's.
func (s *Sweep) Env() results.Env {
	if s.Manifest != nil {
		return s.Manifest.Env
	}
	for _, st := range s.Steps {
		if st.Run != nil {
			return st.Run.Env
		}
	}
	return results.Env{}
}

// Started is when the sweep began: the manifest's creation time or the
// first run's start.
func (s *Sweep) Started() time.Time {
	if s.Manifest != nil && !s.Manifest.Created.IsZero() {
		return s.Manifest.Created
	}
	for _, st := range s.Steps {
		if st.Run != nil {
			return st.Run.Start
		}
	}
	return time.Time{}
}

// specInfo is the part of a sweep spec (loadgen/sweep.Spec as stored in
// the manifest) that reports show. Read leniently: a report of a newer
// spec still renders.
type specInfo struct {
	Paths []struct {
		Name     string          `json:"name"`
		URL      string          `json:"url"`
		Baseline bool            `json:"baseline"`
		Watch    json.RawMessage `json:"watch"`
		Sidecar  json.RawMessage `json:"sidecar"`
	} `json:"paths"`
	Builtin  string          `json:"builtin"` // demo, size
	Target   json.RawMessage `json:"target"`
	Ladder   []string        `json:"ladder"`
	Payloads []int           `json:"payloads"`
	Protocol string          `json:"protocol"`
	Endpoint string          `json:"endpoint"`
	Duration string          `json:"duration"`
	Warmup   string          `json:"warmup"`
	Timeout  string          `json:"timeout"`
	Repeats  int             `json:"repeats"`
	Rates    []float64       `json:"rate"`
}

// sizing tells whether s is an ingress sizing (loadgen size): its paths'
// worker counts are the proxy's worker_processes, one per CPU. A sweep
// whose paths run sidecars has worker counts too, per proxy, and is not
// one.
func (s *Sweep) sizing() bool {
	sp := s.spec()
	if sp.Builtin != "" {
		return sp.Builtin == "size"
	}
	for _, p := range sp.Paths {
		if len(p.Sidecar) > 0 && string(p.Sidecar) != "null" {
			return false
		}
	}
	return true // a sweep file's paths with workers:, or an older sizing
}

func (s *Sweep) spec() specInfo {
	var sp specInfo
	if s.Manifest != nil && len(s.Manifest.Spec) > 0 {
		_ = json.Unmarshal(s.Manifest.Spec, &sp) // lenient: a spec we cannot read shows less
	}
	return sp
}

// describe is one line of what was measured: protocol, paths, ladder,
// payloads, time per step, repeats.
func (s *Sweep) describe() []string {
	parts := s.describeLoad()
	if l := s.Labels(); len(l) > 0 {
		parts = append(parts, "labels "+strings.ReplaceAll(l.String(), ",", ", "))
	}
	return parts
}

// Labels are the labels every run of s carries alike (--label).
func (s *Sweep) Labels() results.Labels {
	var ls []results.Labels
	for _, st := range s.Steps {
		if st.Run != nil {
			ls = append(ls, st.Run.Labels)
		}
	}
	common, _ := results.CommonLabels(ls)
	return common
}

func (s *Sweep) describeLoad() []string {
	sp := s.spec()
	var parts []string
	if p := s.Protocol(); p != "" {
		parts = append(parts, p)
	}
	if s.Single() {
		st := s.Steps[0]
		c := st.Run.Config
		mode := "closed loop"
		if c.OpenLoop() {
			mode = fmt.Sprintf("open loop %s req/s", num(c.Rate))
		}
		parts = append(parts, c.Target, fmt.Sprintf("%d connections, %d threads", c.Connections, c.Threads), mode,
			"measured "+st.Run.Summary.Duration.D().Round(time.Millisecond).String())
		return parts
	}
	paths := s.Paths()
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p
		if p == s.Baseline() {
			names[i] += " (baseline)"
		}
	}
	parts = append(parts, plural(len(paths), "path")+": "+strings.Join(names, ", "))
	ladder := sp.Ladder
	if len(ladder) == 0 {
		for _, c := range Cells(s.Steps) {
			if !contains(ladder, c.Rung) {
				ladder = append(ladder, c.Rung)
			}
		}
	}
	if len(ladder) > 0 {
		parts = append(parts, "ladder "+strings.Join(ladder, " "))
	}
	if len(sp.Payloads) > 0 {
		ps := make([]string, len(sp.Payloads))
		for i, p := range sp.Payloads {
			ps[i] = sizeLabel(p)
		}
		parts = append(parts, "payloads "+strings.Join(ps, ", "))
	}
	switch open := openRates(sp.Rates); {
	case open != "":
		parts = append(parts, open)
	case s.probed():
		parts = append(parts, "open loop at the rates a find-max search probed")
	default:
		parts = append(parts, "closed loop")
	}
	if sp.Duration != "" {
		d := sp.Duration + " per step"
		if sp.Warmup != "" && sp.Warmup != "0s" {
			d += " after " + sp.Warmup + " warm-up"
		}
		parts = append(parts, d)
	}
	if sp.Repeats > 0 {
		parts = append(parts, plural(sp.Repeats, "repeat"))
	}
	return parts
}

// probed tells a find-max search's steps (open-loop probes, their rates
// not in the spec) from a closed-loop sweep's.
func (s *Sweep) probed() bool {
	for _, st := range s.Steps {
		if st.Rate > 0 {
			return true
		}
	}
	return false
}

func openRates(rates []float64) string {
	var open []string
	for _, r := range rates {
		if r > 0 {
			open = append(open, num(r))
		}
	}
	if len(open) == 0 {
		return ""
	}
	s := "open loop " + strings.Join(open, ", ") + " req/s"
	if len(open) < len(rates) {
		s = "closed loop and " + s
	}
	return s
}

// envLine describes a machine in one line.
func envLine(e results.Env) string {
	var parts []string
	if e.Hostname != "" {
		parts = append(parts, hostnames(e.Hostname))
	}
	if e.NumCPU > 0 {
		cpu := fmt.Sprintf("%d CPUs", e.NumCPU)
		if e.CPUModel != "" {
			cpu = fmt.Sprintf("%d × %s", e.NumCPU, e.CPUModel)
		}
		parts = append(parts, cpu)
	}
	if e.OS != "" {
		parts = append(parts, strings.TrimSpace(e.OS+"/"+e.Arch+" "+e.Kernel))
	}
	if e.GoVersion != "" {
		parts = append(parts, e.GoVersion)
	}
	if e.Version != "" {
		parts = append(parts, "loadgen "+e.Version)
	}
	return strings.Join(parts, ", ")
}

// hostnames is a merged run's "vm,vm,vm2" with each name once: "vm,vm2".
func hostnames(h string) string {
	var out []string
	for _, n := range strings.Split(h, ",") {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// num prints a number without needless decimals.
func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// Read reads a results path as the reporters take it (store.ReadPath): a
// sweep's directory or manifest, a directory of sweeps, a step's run or a
// run's, which must hold something of a loadgen run (store.Empty).
func Read(path string) ([]*Sweep, error) {
	p, err := store.ReadPath(path)
	if err != nil {
		return nil, err
	}
	if p.Run != nil {
		if p.Holds == store.HoldsRun && store.Empty(p.Run) {
			return nil, fmt.Errorf("%s: not a loadgen run (no config, summary or histogram)", path)
		}
		return []*Sweep{SingleRun(path, p.Run)}, nil
	}
	out := make([]*Sweep, 0, len(p.Sweeps))
	for _, s := range p.Sweeps {
		out = append(out, fromStore(s))
	}
	return out, nil
}

// ReadSweep reads one sweep's results directory (store.ReadSweep).
func ReadSweep(dir string) (*Sweep, error) {
	m, steps, err := store.ReadSweep(dir)
	if err != nil {
		return nil, err
	}
	return &Sweep{Name: dir, Manifest: m, Steps: steps}, nil
}

func fromStore(s store.Sweep) *Sweep {
	return &Sweep{Name: s.Dir, Manifest: s.Manifest, Steps: s.Steps}
}
