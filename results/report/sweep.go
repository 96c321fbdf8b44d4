package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"loadgen/results"
)

// Cell is the steps of a sweep that share payload, rate, rung and path:
// the repeats of one measurement.
type Cell struct {
	Payload int
	Rate    float64
	Rung    string
	Conns   int
	Path    string
	Steps   []*results.Step
}

// Cells groups steps by payload, rate, rung and path, in the order a table
// reads them: payload, rate, connections, then paths as first seen.
func Cells(steps []*results.Step) []*Cell {
	byKey := map[string]*Cell{}
	pathOrder := map[string]int{}
	var cells []*Cell
	for _, st := range steps {
		if _, ok := pathOrder[st.Path]; !ok {
			pathOrder[st.Path] = len(pathOrder)
		}
		k := fmt.Sprintf("%d|%g|%s|%s", st.Payload, st.Rate, st.Rung, st.Path)
		c := byKey[k]
		if c == nil {
			c = &Cell{Payload: st.Payload, Rate: st.Rate, Rung: st.Rung, Conns: st.Connections, Path: st.Path}
			byKey[k] = c
			cells = append(cells, c)
		}
		c.Steps = append(c.Steps, st)
	}
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		switch {
		case a.Payload != b.Payload:
			return a.Payload < b.Payload
		case a.Rate != b.Rate:
			return a.Rate < b.Rate
		case a.Conns != b.Conns:
			return a.Conns < b.Conns
		}
		return pathOrder[a.Path] < pathOrder[b.Path]
	})
	return cells
}

// Median of a metric over a cell's runs (failed steps have none).
func (c *Cell) Median(f func(*results.Step) float64) (float64, bool) {
	var xs []float64
	for _, st := range c.Steps {
		if st.Run != nil {
			xs = append(xs, f(st))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	sort.Float64s(xs)
	if n := len(xs); n%2 == 1 {
		return xs[n/2], true
	} else {
		return (xs[n/2-1] + xs[n/2]) / 2, true
	}
}

// Watched is the median cost of the processes of one role ("proxy",
// "target") over a cell's runs.
func (c *Cell) Watched(role string, f func(results.ProcessCost) float64) (float64, bool) {
	found := false
	v, ok := c.Median(func(st *results.Step) float64 {
		for _, w := range st.Watched {
			if w.Role == role {
				found = true
				return f(w)
			}
		}
		return 0
	})
	return v, ok && found
}

// Flags marks what makes a cell's figures doubtful: F failed, I
// interrupted, G generator saturated, M machine saturated.
func (c *Cell) Flags() string {
	var f []string
	add := func(s string) {
		for _, x := range f {
			if x == s {
				return
			}
		}
		f = append(f, s)
	}
	for _, st := range c.Steps {
		switch {
		case st.Run == nil:
			add("F")
			continue
		case st.Run.Interrupted:
			add("I")
		}
		if st.Run.Generator.Saturated {
			add("G")
		}
		if MachineSaturated(st.Run) {
			add("M")
		}
	}
	return strings.Join(f, "")
}

func ms(d float64) string {
	if d == 0 {
		return "-"
	}
	return Latency(results.Duration(time.Duration(d)))
}

// SweepTable writes the comparison table of a sweep: one block per payload
// (and rate), a row per ladder step and path, medians over repeats, the
// latency added over the baseline path, and the watched processes' cost.
func SweepTable(w io.Writer, baseline string, steps []*results.Step) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cells := Cells(steps)
	base := map[string]*Cell{}
	for _, c := range cells {
		if c.Path == baseline {
			base[fmt.Sprintf("%d|%g|%s", c.Payload, c.Rate, c.Rung)] = c
		}
	}
	lat := func(q func(results.Latency) results.Duration) func(*results.Step) float64 {
		return func(st *results.Step) float64 { return float64(q(st.Run.Summary.Latency)) }
	}
	p50 := lat(func(l results.Latency) results.Duration { return l.P50 })
	p99 := lat(func(l results.Latency) results.Duration { return l.P99 })
	p999 := lat(func(l results.Latency) results.Duration { return l.P999 })
	block := ""
	for _, c := range cells {
		if b := fmt.Sprintf("%d|%g", c.Payload, c.Rate); b != block {
			if block != "" {
				fmt.Fprintln(tw)
			}
			block = b
			title := "payload " + sizeLabel(c.Payload)
			if c.Rate > 0 {
				title += fmt.Sprintf(", open loop %.0f req/s", c.Rate)
			}
			fmt.Fprintf(tw, "%s\t\n", title)
			fmt.Fprintf(tw, "step\tpath\treq/s\tp50\tp90\tp99\tp99.9\terrors\ttimeouts\t+p50\t+p90\t+p99\t+p99.9\t+cpu\tproxy cpu\tcpu/1k rps\tproxy MiB\ttarget cpu\tgen cpu\tflags\t\n")
		}
		row := []string{c.Rung, c.Path}
		if rps, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok {
			p90, _ := c.Median(lat(func(l results.Latency) results.Duration { return l.P90 }))
			v50, _ := c.Median(p50)
			v99, _ := c.Median(p99)
			v999, _ := c.Median(p999)
			errs, _ := c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Total()) })
			tos, _ := c.Median(func(st *results.Step) float64 { return float64(st.Run.Summary.Errors.Timeout) })
			row = append(row, fmt.Sprintf("%.0f", rps), ms(v50), ms(p90), ms(v99), ms(v999), fmt.Sprintf("%.0f", errs), fmt.Sprintf("%.0f", tos))
			add50, add90, add99, add999, addCPU := "", "", "", "", ""
			if b := base[fmt.Sprintf("%d|%g|%s", c.Payload, c.Rate, c.Rung)]; b != nil && c.Path != baseline {
				if b50, ok := b.Median(p50); ok {
					b90, _ := b.Median(lat(func(l results.Latency) results.Duration { return l.P90 }))
					b99, _ := b.Median(p99)
					b999, _ := b.Median(p999)
					add50, add90, add99, add999 = delta(v50-b50), delta(p90-b90), delta(v99-b99), delta(v999-b999)
					mine, _ := c.Median(watchedCPU)
					theirs, _ := b.Median(watchedCPU)
					addCPU = fmt.Sprintf("%+.2f", mine-theirs)
				}
			}
			row = append(row, add50, add90, add99, add999, addCPU)
			cpu, mem, per, tcpu := "", "", "", ""
			if v, ok := c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
				cpu = fmt.Sprintf("%.2f", v)
				pk, _ := c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUPer1kRPS })
				per = fmt.Sprintf("%.3f", pk)
				m, _ := c.Watched("proxy", func(p results.ProcessCost) float64 { return float64(p.MemMean) })
				mem = fmt.Sprintf("%.1f", m/(1<<20))
			}
			if v, ok := c.Watched("target", func(p results.ProcessCost) float64 { return p.CPUMean }); ok {
				tcpu = fmt.Sprintf("%.2f", v)
			}
			g, _ := c.Median(func(st *results.Step) float64 { return st.Run.Generator.Utilization * st.Run.Generator.CPUs })
			row = append(row, cpu, per, mem, tcpu, fmt.Sprintf("%.2f", g))
		} else {
			reason := ""
			for _, st := range c.Steps {
				if st.Failed != "" {
					reason = st.Failed
				}
			}
			row = append(row, "failed: "+oneLine(reason, 60))
			for len(row) < 19 {
				row = append(row, "")
			}
		}
		row = append(row, c.Flags())
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	fmt.Fprintln(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "medians over repeats; +pNN: latency added over %s; +cpu: watched CPU cores added over it; cpu in cores; "+
		"flags: F failed, I interrupted, G generator saturated, M machine CPU saturated (figures measure contention)\n", orNone(baseline))
	return err
}

// watchedCPU is the CPU cores of every watched process of a step together:
// on a proxy path minus on the baseline, the CPU the path added.
func watchedCPU(st *results.Step) float64 {
	var c float64
	for _, w := range st.Watched {
		c += w.CPUMean
	}
	return c
}

func delta(d float64) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d == 0 {
		return "0"
	}
	return sign + ms(d)
}

func orNone(s string) string {
	if s == "" {
		return "the baseline (none marked)"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
