package report

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes the sweep summary tables (one per payload and rate, a
// row per ladder step and path, medians over repeats) of every sweep, and
// a one-row summary table for every single run.
func Markdown(w io.Writer, sweeps []*Sweep, opt Options) error {
	p := &printer{w: w}
	p.f("# loadgen report\n")
	markdownFindMax(p, opt.FindMax)
	markdownPublished(p, opt.Published)
	if rows := CNIMatrix(sweeps); len(rows) > 0 {
		p.f("\n## CNI path matrix\n\n")
		mdRow(p, "path", "Gbit/s (tcp-stream)", "TCP_RR µs", "TCP_CRR µs")
		p.f("|:--|--:|--:|--:|\n")
		for _, r := range rows {
			g, rr, crr := r.cells()
			mdRow(p, r.Path, g, rr, crr)
		}
		p.f("\nThroughput is the best over the ladder; RR and CRR are the mean latency at the fewest connections.\n")
	}
	if rows := Sizing(sweeps); len(rows) > 0 {
		p.f("\n## Ingress sizing\n\n")
		head := []string{"workers", "req/s (keep-alive)", "req/s per worker", "proxy CPU", "TLS handshakes/s", "handshakes/s per worker", "proxy CPU"}
		align := "|--:|--:|--:|--:|--:|--:|--:|"
		if opt.CPUPrice > 0 {
			head = append(head, "cost a month", "cost a month per 1k req/s")
			align += "--:|--:|"
		}
		mdRow(p, append(head, "paths")...)
		p.f("%s:--|\n", align)
		for _, r := range rows {
			rps, rpsPer, rpsCPU := sizingCells(r.HasRPS, r.RPS, r.RPSCPU, r.Workers)
			tps, tpsPer, tpsCPU := sizingCells(r.HasTPS, r.TPS, r.TPSCPU, r.Workers)
			cells := []string{itoa(r.Workers), rps, rpsPer, rpsCPU, tps, tpsPer, tpsCPU}
			if opt.CPUPrice > 0 {
				month, per1k := r.costCells(opt.CPUPrice)
				cells = append(cells, month, per1k)
			}
			mdRow(p, append(cells, r.Paths)...)
		}
		p.f("\nThe best over the ladder (median over repeats); proxy CPU is the cores the watched proxy used in that step.\n")
	}
	for _, s := range sweeps {
		if s.Single() {
			markdownRun(p, s)
		} else {
			markdownSweep(p, s, opt.Wide)
		}
	}
	return p.err
}

func markdownSweep(p *printer, s *Sweep, wide bool) {
	p.f("\n## Sweep `%s`\n\n%s\n\n", s.Name, strings.Join(s.describe(), " · "))
	if e := envLine(s.Env()); e != "" {
		p.f("Environment: %s\n", e)
	}
	t := newTable(s.Baseline(), s.Steps, s.Hops())
	shown, hidden := t.choose(0, wide)
	for _, b := range t.blocks {
		p.f("\n### %s\n\n", b.title)
		var heads, align []string
		for _, i := range shown {
			heads = append(heads, t.cols[i].head)
			if t.cols[i].left {
				align = append(align, ":--")
			} else {
				align = append(align, "--:")
			}
		}
		mdRow(p, heads...)
		p.f("|%s|\n", strings.Join(align, "|"))
		for _, r := range b.rows {
			var cells []string
			for _, i := range shown {
				cells = append(cells, r[i])
			}
			mdRow(p, cells...)
		}
	}
	if len(t.notes) > 0 {
		p.f("\n")
	}
	for _, n := range t.notes {
		p.f("- %s\n", n)
	}
	if len(hidden) > 0 {
		p.f("\nNot shown: %s (`--wide` shows every column; the CSV and HTML reports have every figure).\n", strings.Join(hidden, ", "))
	}
	p.f("\n%s.\n", upperFirst(legend(t.unit, s.Baseline(), t.keys(shown), t.levels, s.Hops())))
	if lines := placementLines(Cells(s.Steps)); len(lines) > 0 {
		p.f("\nWhere the steps ran:\n\n")
		for _, l := range lines {
			p.f("- %s\n", l)
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func markdownRun(p *printer, s *Sweep) {
	st := s.Steps[0]
	run := st.Run
	p.f("\n## Run `%s`\n\n%s\n\n", s.Name, strings.Join(s.describe(), " · "))
	if e := envLine(run.Env); e != "" {
		p.f("Environment: %s\n\n", e)
	}
	sum := run.Summary
	l := sum.Latency
	mdRow(p, "requests", "req/s", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max", "errors", "timeouts", "gen cpu", "flags")
	p.f("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	cell := &Cell{Steps: s.Steps}
	mdRow(p, fmt.Sprint(sum.Requests), fmt.Sprintf("%.0f", sum.RPS), Latency(l.P50), Latency(l.P90), Latency(l.P95), Latency(l.P99), Latency(l.P999),
		Latency(l.P9999), Latency(l.Max), fmt.Sprint(sum.Errors.Total()), fmt.Sprint(sum.Errors.Timeout),
		fmt.Sprintf("%.2f", GeneratorCores(run)), cell.Flags())
	if u := sum.Uncorrected; u != nil {
		p.f("\nLatency is corrected for coordinated omission; uncorrected: p50 %s, p99 %s, max %s.\n", Latency(u.P50), Latency(u.P99), Latency(u.Max))
	}
	if e := sum.Errors; e.Total() > 0 {
		p.f("\nErrors: connect %d, read %d, write %d, timeout %d, status %d, protocol %d.\n",
			e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol)
	}
	markdownRunTables(p, run) // messages, stages (runtables.go)
	markdownByName(p, run)    // a request mix's figures by name (byname.go)
	if run.Aborted != "" {
		p.f("\n**%s;** figures cover %s.\n", upperFirst(run.Aborted), Latency(sum.Duration))
	} else if run.Interrupted {
		p.f("\n**Interrupted:** the run was stopped early; figures cover %s.\n", Latency(sum.Duration))
	}
	for _, n := range run.Notes {
		p.f("\n**Warning:** %s\n", n)
	}
}

func mdRow(p *printer, cols ...string) {
	for i, c := range cols {
		cols[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	p.f("| %s |\n", strings.Join(cols, " | "))
}

// sizingCells formats a sizing measure, its share per worker and the proxy
// CPU it took ("–" where there is no measure or no watch).
func sizingCells(has bool, v, cpu float64, workers int) (total, perWorker, cores string) {
	if !has {
		return "–", "–", "–"
	}
	cores = "–"
	if cpu > 0 {
		cores = fmt.Sprintf("%.2f", cpu)
	}
	return fmt.Sprintf("%.0f", v), fmt.Sprintf("%.0f", v/float64(max(workers, 1))), cores
}
