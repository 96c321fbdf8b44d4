package report

import (
	"fmt"
	"strings"

	"loadgen/results"
	"loadgen/results/compare"
)

// CellStats are a cell's figures, medians over its repeats, as the sweep
// tables and charts show them. Latencies are in nanoseconds. Costs "per
// unit" are per 1000 requests/s (transactions/s, messages/s), or per
// Gbit/s for tcp-stream (Stream), whose throughput is its figure.
type CellStats struct {
	OK     bool   // at least one repeat has a run
	Failed string // why not, when !OK
	// Unmeasured is set when every run was interrupted before it measured
	// anything (no response, no error); its figures are not zeros but absent.
	Unmeasured bool
	// Answered is set when some run had a response; without one a cell has no
	// latency to show (a failed request's latency is its failure's).
	Answered bool
	Stream   bool // tcp-stream, udp-stream: Gbps is the throughput, latencies are a write's

	RPS                      float64
	Gbps                     float64 // bytes written, in Gbit/s
	P50, P90, P95, P99, P999 float64 // over the runs that had a response
	Errors, Timeouts         float64

	HasAdded bool // the cell has a baseline to compare with
	// AddContended is set when the cell or its baseline measured contention
	// for CPU (G or M): what it adds may be contention's.
	AddContended                    bool
	AddP50, AddP90, AddP99, AddP999 float64
	AddGbps                         float64 // tcp-stream: throughput over the baseline's
	// The added figures' intervals over the repeats of the cell and of
	// its baseline (compare.DiffInterval: distribution-free, of the
	// pairwise differences); not OK with too few repeats for one.
	AddP50CI, AddP90CI, AddP99CI, AddP999CI, AddGbpsCI compare.Interval
	// HasAddedCost is set when processes were watched on this path
	// (AddCPUPerUnit and AddMiB then compare them with the baseline's own,
	// per unit of throughput: a path serving fewer requests is not made cheap
	// by it).
	HasAddedCost  bool
	AddCPUPerUnit float64 // watched CPU cores per unit over the baseline's
	AddMiB        float64 // watched memory over the baseline's, MiB
	AddCPUCI      compare.Interval
	AddMiBCI      compare.Interval

	HasProxy        bool // a proxy was watched on this path
	ProxyCPU        float64
	ProxyCPUPer1k   float64 // per 1000 requests/s, as recorded with the step
	ProxyCPUPerUnit float64 // per unit: ProxyCPUPer1k, or per Gbit/s for tcp-stream
	ProxyMiB        float64
	// Client and Server are the workers' and the target's sidecars apart.
	Client, Server SideStats
	HasTarget      bool
	TargetCPU      float64
	// The cluster's context: the control plane's cores and the nodes'
	// (every node that ran the step's pods, summed).
	HasControlPlane, HasNode bool
	ControlPlaneCPU, NodeCPU float64
	GenCPU                   float64 // cores the generator used
	Flags                    string  // see Cell.Flags
	// Messages are the streamed answers' messages (gRPC server
	// streaming: Summary.Messages), medians over the repeats that had
	// them; nil when none did.
	Messages *MessageStats
}

// MessageStats are a cell's streamed messages: their count and rate, the
// time to an answer's first message and between two of one answer
// (nanoseconds; HasGap when some answer had two).
type MessageStats struct {
	Count, PerSec                          float64
	FirstP50, FirstP90, FirstP99, FirstMax float64
	HasGap                                 bool
	GapP50, GapP90, GapP99, GapMax         float64
}

// messageStats reduces the cell's streamed messages, nil without any.
func (c *Cell) messageStats() *MessageStats {
	has := func(st *results.Step) bool { return st.Run.Summary.Messages != nil }
	count, ok := c.medianWhere(has, func(st *results.Step) float64 { return float64(st.Run.Summary.Messages.Count) })
	if !ok {
		return nil
	}
	m := &MessageStats{Count: count}
	m.PerSec, _ = c.medianWhere(has, func(st *results.Step) float64 { return st.Run.Summary.Messages.PerSec })
	first := func(q func(results.Latency) results.Duration) float64 {
		v, _ := c.medianWhere(has, func(st *results.Step) float64 { return float64(q(st.Run.Summary.Messages.First)) })
		return v
	}
	m.FirstP50, m.FirstP90 = first(func(l results.Latency) results.Duration { return l.P50 }), first(func(l results.Latency) results.Duration { return l.P90 })
	m.FirstP99, m.FirstMax = first(func(l results.Latency) results.Duration { return l.P99 }), first(func(l results.Latency) results.Duration { return l.Max })
	hasGap := func(st *results.Step) bool { return has(st) && st.Run.Summary.Messages.Gap != nil }
	gap := func(q func(results.Latency) results.Duration) float64 {
		v, ok := c.medianWhere(hasGap, func(st *results.Step) float64 { return float64(q(*st.Run.Summary.Messages.Gap)) })
		m.HasGap = m.HasGap || ok
		return v
	}
	m.GapP50, m.GapP90 = gap(func(l results.Latency) results.Duration { return l.P50 }), gap(func(l results.Latency) results.Duration { return l.P90 })
	m.GapP99, m.GapMax = gap(func(l results.Latency) results.Duration { return l.P99 }), gap(func(l results.Latency) results.Duration { return l.Max })
	return m
}

// failure is why every repeat of the cell failed (Step.Failure: a path
// whose every answer was an error has figures of failures only), or "".
func (c *Cell) failure() string {
	why := ""
	for _, st := range c.Steps {
		f := st.Failure()
		if f == "" {
			return ""
		}
		if why == "" || st.Failed != "" {
			why = f
		}
	}
	return why
}

// Stats reduces a cell to its figures; base is the baseline path's cell
// of the same payload, rate and rung (nil when there is none, or when c
// is the baseline).
func (c *Cell) Stats(base *Cell) CellStats {
	var s CellStats
	s.Flags = c.Flags()
	rps, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS })
	if failed := c.failure(); !ok || failed != "" {
		s.Failed = failed
		return s
	}
	s.OK, s.RPS = true, rps
	s.Stream = SendsOnly(c.protocol())
	s.Unmeasured = true
	for _, st := range c.Steps {
		if r := st.Run; r != nil {
			s.Answered = s.Answered || r.Summary.Requests > 0
			s.Unmeasured = s.Unmeasured && r.Interrupted && r.Summary.Requests == 0 && r.Summary.Errors.Total() == 0
		}
	}
	s.Gbps, _ = c.Median(gbps)
	answered := func(st *results.Step) bool { return st.Run.Summary.Requests > 0 }
	s.P50, _ = c.medianWhere(answered, latency(func(l results.Latency) results.Duration { return l.P50 }))
	s.P90, _ = c.medianWhere(answered, latency(func(l results.Latency) results.Duration { return l.P90 }))
	s.P95, _ = c.medianWhere(answered, latency(func(l results.Latency) results.Duration { return l.P95 }))
	s.P99, _ = c.medianWhere(answered, latency(func(l results.Latency) results.Duration { return l.P99 }))
	s.P999, _ = c.medianWhere(answered, latency(func(l results.Latency) results.Duration { return l.P999 }))
	s.Errors, _ = c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Total()) })
	s.Timeouts, _ = c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Timeout) })
	perUnit := func(cost func(*results.Step) float64) func(*results.Step) float64 {
		return func(st *results.Step) float64 { return cost(st) / throughputUnits(st, s.Stream) }
	}
	hasUnits := func(st *results.Step) bool { return throughputUnits(st, s.Stream) > 0 }
	if base != nil && base != c {
		added := func(keep func(*results.Step) bool, f func(*results.Step) float64) compare.Interval {
			return compare.DiffInterval(base.values(keep, f), c.values(keep, f))
		}
		if b := base.Stats(nil); b.OK && b.Answered == s.Answered {
			s.HasAdded = true
			s.AddContended = strings.ContainsAny(s.Flags+b.Flags, "GM")
			s.AddP50, s.AddP90, s.AddP99, s.AddP999 = s.P50-b.P50, s.P90-b.P90, s.P99-b.P99, s.P999-b.P999
			s.AddGbps = s.Gbps - b.Gbps
			s.AddP50CI = added(answered, latency(func(l results.Latency) results.Duration { return l.P50 }))
			s.AddP90CI = added(answered, latency(func(l results.Latency) results.Duration { return l.P90 }))
			s.AddP99CI = added(answered, latency(func(l results.Latency) results.Duration { return l.P99 }))
			s.AddP999CI = added(answered, latency(func(l results.Latency) results.Duration { return l.P999 }))
			s.AddGbpsCI = added(nil, gbps)
		}
		mine, ok1 := c.medianWhere(hasUnits, perUnit(watchedCPU))
		theirs, ok2 := base.medianWhere(hasUnits, perUnit(watchedCPU))
		if c.watched() && ok1 && ok2 {
			s.HasAddedCost = true
			s.AddCPUPerUnit = mine - theirs
			m, _ := c.Median(watchedMem)
			t, _ := base.Median(watchedMem)
			s.AddMiB = (m - t) / (1 << 20)
			s.AddCPUCI = added(hasUnits, perUnit(watchedCPU))
			s.AddMiBCI = added(nil, func(st *results.Step) float64 { return watchedMem(st) / (1 << 20) })
		}
	}
	if v, ok := c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
		s.HasProxy, s.ProxyCPU = true, v
		s.ProxyCPUPer1k, _ = c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUPer1kRPS })
		s.ProxyCPUPerUnit = s.ProxyCPUPer1k
		if s.Stream {
			s.ProxyCPUPerUnit, _ = c.medianWhere(hasUnits, perUnit(func(st *results.Step) float64 { return roleCPU(st, "proxy") }))
		}
		m, _ := c.Watched("proxy", func(p results.ProcessCost) float64 { return float64(p.MemMean) })
		s.ProxyMiB = m / (1 << 20)
	}
	s.Client, s.Server = c.side("client", s.Stream, hasUnits, perUnit), c.side("server", s.Stream, hasUnits, perUnit)
	if v, ok := c.Watched("target", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
		s.HasTarget, s.TargetCPU = true, v
	}
	cpu := func(p results.ProcessCost) float64 { return p.CPUMean }
	s.ControlPlaneCPU, s.HasControlPlane = c.Watched(results.RoleControlPlane, cpu)
	s.NodeCPU, s.HasNode = c.Watched(results.RoleNode, cpu)
	s.GenCPU, _ = c.Median(func(st *results.Step) float64 { return GeneratorCores(st.Run) })
	s.Messages = c.messageStats()
	return s
}

// SideStats are one side's proxies (a sidecar mesh's client or server
// proxies): medians over the cell's repeats.
type SideStats struct {
	Has     bool // measured
	None    bool // the side has no proxy in this mode
	CPU     float64
	CPUPer  float64 // per unit: per 1000 requests/s, or per Gbit/s for tcp-stream
	MiB     float64
	MiBPer1 float64 // MiB per 1000 requests/s
}

// side reduces the watches of one side of the path.
func (c *Cell) side(side string, stream bool, hasUnits func(*results.Step) bool,
	perUnit func(func(*results.Step) float64) func(*results.Step) float64) SideStats {
	var s SideStats
	if c.noProxy(side) {
		s.None = true
		return s
	}
	match := func(w results.ProcessCost) bool { return w.Side == side }
	cpu, ok := c.watchedWhere(match, func(p results.ProcessCost) float64 { return p.CPUMean })
	if !ok {
		return s
	}
	s.Has, s.CPU = true, cpu
	mib, _ := c.watchedWhere(match, func(p results.ProcessCost) float64 { return float64(p.MemMean) / (1 << 20) })
	s.MiB = mib
	s.CPUPer, _ = c.watchedWhere(match, func(p results.ProcessCost) float64 { return p.CPUPer1kRPS })
	s.MiBPer1, _ = c.watchedWhere(match, func(p results.ProcessCost) float64 { return p.MiBPer1kRPS })
	if stream {
		s.CPUPer, _ = c.medianWhere(hasUnits, perUnit(func(st *results.Step) float64 {
			var v float64
			for _, w := range st.Watched {
				if match(w) && w.NoProxy == "" {
					v += w.CPUMean
				}
			}
			return v
		}))
	}
	return s
}

// throughputUnits is a step's throughput in the units its costs are counted per:
// thousands of requests/s, or Gbit/s for tcp-stream.
func throughputUnits(st *results.Step, stream bool) float64 {
	if stream {
		return gbps(st)
	}
	return st.Run.Summary.RPS / 1000
}

func gbps(st *results.Step) float64 { return st.Run.Summary.Gbps() }

// watchedCPU is the CPU cores of every watched process of a step together:
// on a proxy path minus on the baseline, the CPU the path added.
func watchedCPU(st *results.Step) float64 {
	var c float64
	for _, w := range st.Watched {
		if w.PathCost() {
			c += w.CPUMean
		}
	}
	return c
}

// watchedMem is the memory (bytes, mean) of every watched process of a step.
func watchedMem(st *results.Step) float64 {
	var m float64
	for _, w := range st.Watched {
		if w.PathCost() {
			m += float64(w.MemMean)
		}
	}
	return m
}

func roleCPU(st *results.Step, role string) float64 {
	var c float64
	for _, w := range st.Watched {
		if w.Role == role {
			c += w.CPUMean
		}
	}
	return c
}

// watched tells whether the cell's runs watched processes of the path
// (not a control plane's or a node's) and every figure of them was
// measured (a sum short of one would read as a saving).
func (c *Cell) watched() bool {
	any := false
	for _, st := range c.Steps {
		for _, w := range st.Watched {
			if !w.PathCost() {
				continue
			}
			if w.Unmeasured != "" {
				return false
			}
			any = true
		}
	}
	return any
}

// protocol is the protocol of the cell's runs ("" when none ran).
func (c *Cell) protocol() string {
	for _, st := range c.Steps {
		if st.Run != nil {
			return st.Run.Config.Protocol
		}
	}
	return ""
}

func latency(q func(results.Latency) results.Duration) func(*results.Step) float64 {
	return func(st *results.Step) float64 { return float64(q(st.Run.Summary.Latency)) }
}

// BaselineOf returns, for each cell, the baseline path's cell of the same
// payload, rate and rung (nil when there is none).
func BaselineOf(cells []*Cell, baseline string) func(*Cell) *Cell {
	base := map[string]*Cell{}
	key := func(c *Cell) string { return fmt.Sprintf("%d|%g|%s", c.Payload, c.Rate, c.Rung) }
	if baseline != "" {
		for _, c := range cells {
			if c.Path == baseline {
				base[key(c)] = c
			}
		}
	}
	return func(c *Cell) *Cell {
		if c.Path == baseline {
			return nil
		}
		return base[key(c)]
	}
}

// GeneratorCores is the CPU the generator used during a run, in cores.
func GeneratorCores(run *results.Run) float64 { return run.Generator.Utilization * run.Generator.CPUs }

// MachineSaturated tells whether the whole machine's CPUs were nearly all
// busy during a run's measured window (/proc/stat, every process: the
// generator, the target, the proxies and anything else): then the figures
// measure contention for CPU, not the path.
func MachineSaturated(run *results.Run) bool {
	return run != nil && run.Machine != nil && run.Machine.Saturated
}

// Block is the cells of one payload and rate: one table, one set of
// charts.
type Block struct {
	Payload int
	Rate    float64
	Cells   []*Cell
}

// Title names a block: "payload 1 KiB" or "payload 1 KiB, open loop 500 req/s".
func (b *Block) Title() string {
	t := "payload " + sizeLabel(b.Payload)
	if b.Payload == 0 {
		t = "no payload"
	}
	if b.Rate > 0 {
		t += ", open loop " + num(b.Rate) + " req/s"
	}
	return t
}

// Rungs are the block's ladder steps in order.
func (b *Block) Rungs() []string {
	var out []string
	for _, c := range b.Cells {
		if !contains(out, c.Rung) {
			out = append(out, c.Rung)
		}
	}
	return out
}

// Blocks splits cells (as Cells orders them) by payload and rate.
func Blocks(cells []*Cell) []*Block {
	var out []*Block
	for _, c := range cells {
		if n := len(out); n == 0 || out[n-1].Payload != c.Payload || out[n-1].Rate != c.Rate {
			out = append(out, &Block{Payload: c.Payload, Rate: c.Rate})
		}
		b := out[len(out)-1]
		b.Cells = append(b.Cells, c)
	}
	return out
}
