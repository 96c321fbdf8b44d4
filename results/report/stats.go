package report

import (
	"fmt"

	"loadgen/results"
)

// CellStats are a cell's figures, medians over its repeats, as the sweep
// tables and charts show them. Latencies are in nanoseconds.
type CellStats struct {
	OK     bool   // at least one repeat has a run
	Failed string // why not, when !OK

	RPS                 float64
	P50, P90, P99, P999 float64
	Errors, Timeouts    float64

	HasAdded                        bool // the cell has a baseline to compare with
	AddP50, AddP90, AddP99, AddP999 float64
	AddCPU                          float64 // watched CPU cores over the baseline's (SweepTable's +cpu)
	HasProxy                        bool    // a proxy was watched on this path
	ProxyCPU, ProxyCPUPer1k         float64
	ProxyMiB                        float64
	HasTarget                       bool
	TargetCPU                       float64
	GenCPU                          float64 // cores the generator used
	Flags                           string  // see Cell.Flags
}

// Stats reduces a cell to its figures; base is the baseline path's cell
// of the same payload, rate and rung (nil when there is none, or when c
// is the baseline).
func (c *Cell) Stats(base *Cell) CellStats {
	var s CellStats
	s.Flags = c.Flags()
	rps, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS })
	if !ok {
		for _, st := range c.Steps {
			if st.Failed != "" {
				s.Failed = st.Failed
			}
		}
		return s
	}
	s.OK, s.RPS = true, rps
	s.P50, _ = c.Median(latency(func(l results.Latency) results.Duration { return l.P50 }))
	s.P90, _ = c.Median(latency(func(l results.Latency) results.Duration { return l.P90 }))
	s.P99, _ = c.Median(latency(func(l results.Latency) results.Duration { return l.P99 }))
	s.P999, _ = c.Median(latency(func(l results.Latency) results.Duration { return l.P999 }))
	s.Errors, _ = c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Total()) })
	s.Timeouts, _ = c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Timeout) })
	if base != nil && base != c {
		if b := base.Stats(nil); b.OK {
			s.HasAdded = true
			s.AddP50, s.AddP90, s.AddP99, s.AddP999 = s.P50-b.P50, s.P90-b.P90, s.P99-b.P99, s.P999-b.P999
			mine, _ := c.Median(watchedCPU)
			theirs, _ := base.Median(watchedCPU)
			s.AddCPU = mine - theirs
		}
	}
	if v, ok := c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
		s.HasProxy, s.ProxyCPU = true, v
		s.ProxyCPUPer1k, _ = c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUPer1kRPS })
		m, _ := c.Watched("proxy", func(p results.ProcessCost) float64 { return float64(p.MemMean) })
		s.ProxyMiB = m / (1 << 20)
	}
	if v, ok := c.Watched("target", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
		s.HasTarget, s.TargetCPU = true, v
	}
	s.GenCPU, _ = c.Median(func(st *results.Step) float64 { return GeneratorCores(st.Run) })
	return s
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
