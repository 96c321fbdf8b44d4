package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"loadgen/results"
)

// glance makes a sweep's "at a glance" cards, a card per path. The raw
// TCP sweeps of a lab have none: the CNI path matrix, which the page
// opens with, is their summary.
func glance(s *Sweep, colors map[string]string, named bool) []glanceCard {
	if s.Single() || strings.HasPrefix(s.Protocol(), "tcp-") {
		return nil
	}
	cells := Cells(s.Steps)
	baseOf := BaselineOf(cells, s.Baseline())
	var out []glanceCard
	for _, p := range s.Paths() {
		var peak float64
		var peakAt string
		var add50, add99, addCPU, addMiB, per1k []float64
		var errs float64
		var light CellStats
		var lightAt string
		for _, c := range cells {
			if c.Path != p {
				continue
			}
			st := c.Stats(baseOf(c))
			if !st.OK {
				continue
			}
			if lightAt == "" {
				light, lightAt = st, c.Rung+" · "+sizeLabel(c.Payload) // the lightest step: cells sort by payload, then connections
			}
			if st.RPS > peak {
				peak, peakAt = st.RPS, c.Rung+" · "+sizeLabel(c.Payload)
			}
			if st.HasAdded && st.Answered {
				add50, add99 = append(add50, st.AddP50), append(add99, st.AddP99)
			}
			if st.HasAddedCost {
				addCPU, addMiB = append(addCPU, st.AddCPUPerUnit), append(addMiB, st.AddMiB)
			}
			if st.HasProxy {
				per1k = append(per1k, st.ProxyCPUPerUnit)
			}
			errs += st.Errors
		}
		if peakAt == "" {
			failed := false
			for _, c := range cells {
				failed = failed || c.Path == p
			}
			if failed {
				out = append(out, glanceCard{Path: p, Color: colors[p], Baseline: p == s.Baseline(),
					Rows: []fact{{"result", "failed at every step", "see the tables"}}})
			}
			continue
		}
		card := glanceCard{Path: p, Color: colors[p], Baseline: p == s.Baseline()}
		if named {
			card.Sweep = s.Protocol()
			if card.Sweep == "" {
				card.Sweep = filepath.Base(s.Name)
			}
		}
		card.Rows = append(card.Rows, fact{"peak req/s", thousands(peak), "at " + peakAt})
		if light.OK {
			card.Rows = append(card.Rows, fact{"p50", micro(Latency(results.Duration(light.P50))), "at " + lightAt},
				fact{"p99", micro(Latency(results.Duration(light.P99))), "at " + lightAt})
		}
		if len(add50) > 0 {
			card.Rows = append(card.Rows, fact{"added p50", micro(delta(median(add50))), "median over steps"},
				fact{"added p99", micro(delta(median(add99))), "median over steps"})
		}
		if len(addCPU) > 0 {
			card.Rows = append(card.Rows, fact{"added CPU / 1k req/s", fmt.Sprintf("%+.3f cores", median(addCPU)), "watched processes, per request, over the baseline's; median over steps"},
				fact{"added memory", fmt.Sprintf("%+.1f MiB", median(addMiB)), "watched processes, median over steps"})
		}
		if len(per1k) > 0 {
			card.Rows = append(card.Rows, fact{"proxy CPU / 1k req/s", fmt.Sprintf("%.3f cores", median(per1k)), "median over steps"})
		}
		card.Rows = append(card.Rows, fact{"errors", thousands(errs), ""})
		if sat, all, what := saturatedSteps(s.Steps, p); sat > 0 {
			card.Rows = append(card.Rows, fact{"saturated", fmt.Sprintf("%d of %d steps", sat, all), what + ": those figures measure contention"})
		}
		out = append(out, card)
	}
	return out
}

// saturatedSteps counts the steps of path whose machine (M) or generator
// (G) was CPU-saturated, of all its steps that ran, and says which.
func saturatedSteps(steps []*results.Step, path string) (sat, all int, what string) {
	var m, g bool
	for _, st := range steps {
		if st.Path != path || st.Run == nil {
			continue
		}
		all++
		ms, gs := MachineSaturated(st.Run), st.Run.Generator.Saturated
		if ms || gs {
			sat++
		}
		m, g = m || ms, g || gs
	}
	switch {
	case m && g:
		what = "the machine's CPUs (M) or loadgen's own (G) were saturated"
	case m:
		what = "the machine's CPUs were saturated (M)"
	default:
		what = "loadgen's own CPUs were saturated (G)"
	}
	return sat, all, what
}

func median(xs []float64) float64 {
	ys := append([]float64(nil), xs...)
	sort.Float64s(ys)
	n := len(ys)
	if n%2 == 1 {
		return ys[n/2]
	}
	return (ys[n/2-1] + ys[n/2]) / 2
}
