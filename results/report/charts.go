package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"
)

// blockCharts are the charts of one payload (and rate): x is the ladder.
func blockCharts(id string, s *Sweep, b *Block, stats map[*Cell]CellStats, colors map[string]string, u unit) []chartView {
	rungs := b.Rungs()
	var xt []tick
	for i, r := range rungs {
		xt = append(xt, tick{float64(i), r})
	}
	pad := 0.5
	if len(rungs) == 1 {
		pad = 1
	}
	var paths []string
	for _, c := range b.Cells {
		if !contains(paths, c.Path) {
			paths = append(paths, c.Path)
		}
	}
	at := map[string]*Cell{}
	for _, c := range b.Cells {
		at[c.Path+"|"+c.Rung] = c
	}
	// line is one path's series of a figure; ok filters the cells that have it.
	line := func(path, name, dash string, f func(CellStats) float64, ok func(CellStats) bool, yf func(float64) string) (series, bool) {
		se := series{Path: path, Name: name, Color: colors[path], Dash: dash, Markers: true}
		any := false
		for i, r := range rungs {
			p := point{X: float64(i), Y: math.NaN()}
			if c := at[path+"|"+r]; c != nil {
				if st := stats[c]; st.OK && ok(st) {
					p.Y = f(st)
					p.Tip = fmt.Sprintf("%s %s: %s", name, r, yf(p.Y))
					any = true
				}
			}
			se.Points = append(se.Points, p)
		}
		return se, any
	}
	all := func(CellStats) bool { return true }
	// pathLegend lists the paths that have a line in c, in order.
	pathLegend := func(c *lineChart) []legendItem {
		var l []legendItem
		var seen []string
		for _, se := range c.Series {
			if !contains(seen, se.Path) {
				seen = append(seen, se.Path)
				l = append(l, legendItem{Name: se.Path, Color: colors[se.Path]})
			}
		}
		return l
	}
	var out []chartView
	add := func(c *lineChart, legend []legendItem) {
		if !c.drawn() {
			return
		}
		c.ID = fmt.Sprintf("%s-c%d", id, len(out)+1)
		out = append(out, chartView{Title: c.Title, Note: c.Note, Wide: c.Wide, SVG: template.HTML(c.SVG()), Legend: legend})
	}
	xl := "connections × threads (ladder step)"

	if !u.stream { // a write's latency is not a round trip's
		// Latency percentiles: colour is the path, dash the percentile.
		lat := &lineChart{XPad: pad, Title: "Latency", Note: "p50, p90 and p99 per path, log scale", YLabel: "latency", XLabel: xl,
			XTicks: xt, LogY: true, YFmt: latencyTick, Wide: true}
		for _, p := range paths {
			for _, ps := range pctStyles {
				if se, ok := line(p, p+" "+ps.Name, ps.Dash, ps.Get, all, latencyTick); ok {
					lat.Series = append(lat.Series, se)
				}
			}
		}
		leg := pathLegend(lat)
		for i, ps := range pctStyles {
			leg = append(leg, legendItem{Name: ps.Name, Color: "#6b7280", Dash: ps.Dash, Gap: i == 0})
		}
		add(lat, leg)
	}

	rpsFmt := func(v float64) string { return thousands(v) + " " + u.rate }
	rps := &lineChart{XPad: pad, Title: "Throughput", Note: u.rate + ", median over repeats", YLabel: u.rate, XLabel: xl, XTicks: xt}
	throughput := func(s CellStats) float64 { return s.RPS }
	if u.stream {
		throughput = func(s CellStats) float64 { return s.Gbps }
		rpsFmt = func(v float64) string { return fmt.Sprintf("%.2f Gbit/s", v) }
	}
	for _, p := range paths {
		if se, ok := line(p, p, "", throughput, all, rpsFmt); ok {
			rps.Series = append(rps.Series, se)
		}
	}
	add(rps, pathLegend(rps))

	if base := s.Baseline(); base != "" && !u.stream {
		added := &lineChart{XPad: pad, Title: "Latency added over " + base, Note: "p50 and p99, path minus baseline at the same step",
			YLabel: "added latency", XLabel: xl, XTicks: xt, Zero: true, YFmt: latencyTick}
		for _, p := range paths {
			if p == base {
				continue
			}
			has := func(s CellStats) bool { return s.HasAdded }
			a, ok1 := line(p, p+" +p50", "", func(s CellStats) float64 { return s.AddP50 }, has, latencyTick)
			b, ok2 := line(p, p+" +p99", "2 3.5", func(s CellStats) float64 { return s.AddP99 }, has, latencyTick)
			if ok1 || ok2 {
				added.Series = append(added.Series, a, b)
			}
		}
		leg := pathLegend(added)
		leg = append(leg, legendItem{Name: "+p50", Color: "#6b7280", Gap: true}, legendItem{Name: "+p99", Color: "#6b7280", Dash: "2 3.5"})
		add(added, leg)
	}

	cnt := func(v float64) string { return thousands(v) }
	errs := &lineChart{XPad: pad, Title: "Errors and timeouts", Note: "failed requests of any class (solid), of which timeouts (dashed)",
		YLabel: "requests", XLabel: xl, XTicks: xt, YFmt: compactInt}
	for _, p := range paths {
		if se, ok := line(p, p+" errors", "", func(s CellStats) float64 { return s.Errors }, all, cnt); ok {
			errs.Series = append(errs.Series, se)
		}
		if se, ok := line(p, p+" timeouts", "7 4", func(s CellStats) float64 { return s.Timeouts }, all, cnt); ok {
			errs.Series = append(errs.Series, se)
		}
	}
	if n := errorsNote(b, stats); n != "" {
		errs.Note = n
	}
	leg := pathLegend(errs)
	leg = append(leg, legendItem{Name: "errors", Color: "#6b7280", Gap: true}, legendItem{Name: "timeouts", Color: "#6b7280", Dash: "7 4"})
	add(errs, leg)

	proxy := func(s CellStats) bool { return s.HasProxy }
	var proxied []string
	for _, c := range b.Cells {
		if st := stats[c]; st.HasProxy && !contains(proxied, c.Path) {
			proxied = append(proxied, c.Path)
		}
	}
	if len(proxied) > 0 {
		cores := func(v float64) string { return fmt.Sprintf("%.2f cores", v) }
		cpu := &lineChart{XPad: pad, Title: "Proxy CPU", Note: "cores used by the proxy processes, mean over the step", YLabel: "CPU cores", XLabel: xl, XTicks: xt}
		perWhat := "per 1000 " + u.rate
		if u.stream {
			perWhat = "per Gbit/s"
		}
		per := &lineChart{XPad: pad, Title: "Proxy CPU " + perWhat, Note: "the figure Istio publishes for its sidecar", YLabel: "cores " + perWhat, XLabel: xl, XTicks: xt}
		mem := &lineChart{XPad: pad, Title: "Proxy memory", Note: "resident memory of the proxy processes, mean over the step", YLabel: "MiB", XLabel: xl, XTicks: xt}
		for _, p := range proxied {
			if se, ok := line(p, p, "", func(s CellStats) float64 { return s.ProxyCPU }, proxy, cores); ok {
				cpu.Series = append(cpu.Series, se)
			}
			if se, ok := line(p, p, "", func(s CellStats) float64 { return s.ProxyCPUPerUnit }, proxy, func(v float64) string { return fmt.Sprintf("%.3f cores", v) }); ok {
				per.Series = append(per.Series, se)
			}
			if se, ok := line(p, p, "", func(s CellStats) float64 { return s.ProxyMiB }, proxy, func(v float64) string { return fmt.Sprintf("%.1f MiB", v) }); ok {
				mem.Series = append(mem.Series, se)
			}
		}
		add(cpu, pathLegend(cpu))
		add(per, pathLegend(per))
		add(mem, pathLegend(mem))
	}
	return out
}

// errorsNote is the errors chart's caption when its lines do not tell all:
// the steps that failed whole (no run, or no request of it succeeded),
// which have no point, and their failed requests; or, when no step has an
// error, that there are none. "" otherwise.
func errorsNote(b *Block, stats map[*Cell]CellStats) string {
	var failed []string
	var lost int64
	none := true
	for _, c := range b.Cells {
		st := stats[c]
		if st.OK {
			none = none && st.Errors == 0 && st.Timeouts == 0
			continue
		}
		failed = append(failed, c.Path+" "+c.Rung)
		for _, s := range c.Steps {
			if s.Run != nil {
				lost += s.Run.Summary.Errors.Total()
			}
		}
	}
	switch {
	case len(failed) > 0:
		n := "not plotted, failed whole: " + strings.Join(failed, ", ")
		if lost > 0 {
			n += fmt.Sprintf(" (%s failed requests)", thousands(float64(lost)))
		}
		return n + "; failed requests of any class (solid), of which timeouts (dashed)"
	case none:
		return "no failed requests and no timeouts at any step"
	}
	return ""
}

func compactInt(v float64) string {
	if v != math.Trunc(v) {
		return ""
	}
	return compact(v)
}

func buildRun(id string, s *Sweep, colors map[string]string) *runView {
	st := s.Steps[0]
	run := st.Run
	sum := run.Summary
	l := sum.Latency
	c := run.Config
	rv := &runView{}
	if why := st.Failure(); why != "" && run.Aborted == "" {
		rv.Failed = "The run failed: " + why + "."
	}
	for _, f := range (&Cell{Steps: s.Steps}).Flags() {
		rv.Flags = append(rv.Flags, flagView{string(f), FlagMeaning(string(f))})
	}
	if c.OpenLoop() {
		rv.Facts = append(rv.Facts, fact{"Rate", thousands(c.Rate) + " req/s asked (open loop, latency corrected for coordinated omission)", ""})
	} else {
		rv.Facts = append(rv.Facts, fact{"Rate", "closed loop", ""})
	}
	rv.Facts = append(rv.Facts, fact{"Measured", sum.Duration.D().Round(time.Millisecond).String() + " from " + run.Start.UTC().Format("2006-01-02 15:04:05 UTC"), ""})
	rv.Cols = []string{"requests", "req/s", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max", "errors", "timeouts", "gen cpu"}
	rv.Values = []string{thousands(float64(sum.Requests)), thousands(sum.RPS), Latency(l.P50), Latency(l.P90), Latency(l.P95), Latency(l.P99), Latency(l.P999),
		Latency(l.P9999), Latency(l.Max), fmt.Sprint(sum.Errors.Total()), fmt.Sprint(sum.Errors.Timeout), fmt.Sprintf("%.2f cores", GeneratorCores(run))}
	for k := range rv.Values {
		rv.Values[k] = micro(rv.Values[k])
	}

	ch := &lineChart{ID: id + "-spectrum", Title: "Latency by percentile", YLabel: "latency", XLabel: "percentile (scaled by 1/(1−p), as HdrHistogram plots)",
		LogY: true, YFmt: latencyTick, Wide: true}
	var legend []legendItem
	spectrum := func(enc, name, color, dash string) {
		h, err := decodeHist(enc)
		if err != nil || h.Count() == 0 {
			return
		}
		se := series{Name: name, Color: color, Dash: dash}
		for _, q := range spectrumQuantiles(h.Count()) {
			se.Points = append(se.Points, point{X: -math.Log10(1 - q), Y: float64(h.Quantile(q))})
		}
		se.Points = append(se.Points, point{X: -math.Log10(1 - spectrumTop(h.Count())), Y: float64(h.Max())})
		ch.Series = append(ch.Series, se)
		legend = append(legend, legendItem{Name: name, Color: color, Dash: dash})
	}
	color := colors[st.Path]
	if run.Histograms.Uncorrected != "" {
		spectrum(run.Histograms.Latency, "corrected", color, "")
		spectrum(run.Histograms.Uncorrected, "uncorrected", "#9ca3af", "7 4")
		ch.Note = "HdrHistogram percentile spectrum; corrected for coordinated omission and not"
	} else {
		spectrum(run.Histograms.Latency, "latency", color, "")
		ch.Note = "HdrHistogram percentile spectrum, log scale"
	}
	top := -math.Log10(1 - spectrumTop(sum.Latency.Count))
	for i, lab := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"} {
		if float64(i) > math.Ceil(top-0.1) {
			break
		}
		ch.XTicks = append(ch.XTicks, tick{float64(i), lab})
	}
	if ch.drawn() {
		rv.Chart = chartView{Title: ch.Title, Note: ch.Note, Wide: true, SVG: template.HTML(ch.SVG()), Legend: legend}
	}
	rv.Time = overTimeView(id+"-time", "Over time", run, color, true)
	if len(sum.Status) > 0 && !strings.HasPrefix(c.Protocol, "tcp") {
		codes := make([]int, 0, len(sum.Status))
		for k := range sum.Status {
			codes = append(codes, k)
		}
		sort.Ints(codes)
		var parts []string
		for _, k := range codes {
			name := fmt.Sprint(k)
			if strings.HasPrefix(c.Protocol, "grpc") && k < len(grpcCodes) {
				name = grpcCodes[k]
			}
			parts = append(parts, fmt.Sprintf("%s: %s", name, thousands(float64(sum.Status[k]))))
		}
		rv.Codes = strings.Join(parts, " · ")
	}
	if e := sum.Errors; e.Total() > 0 {
		rv.Errors = fmt.Sprintf("connect %d · read %d · write %d · timeout %d · status %d · protocol %d", e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol)
	}
	if run.Aborted != "" {
		rv.Notes = append(rv.Notes, upperFirst(run.Aborted)+".")
	} else if run.Interrupted {
		rv.Notes = append(rv.Notes, "Interrupted: the run was stopped early.")
	}
	rv.Notes = append(rv.Notes, run.Notes...)
	if MachineSaturated(run) {
		rv.Notes = append(rv.Notes, upperFirst(machineSaturated(run.Machine))+".")
	}
	rv.ByName, rv.ByHost = htmlByName(run), htmlByHost(run)
	rv.Messages, rv.Stages = htmlMessages(run), htmlStages(run)
	return rv
}

// spectrumTop is the highest percentile a histogram of n values resolves.
func spectrumTop(n int64) float64 {
	top := 1 - 1/float64(max(n, 10))
	return math.Min(top, 0.999999)
}

// spectrumQuantiles are the quantiles of a percentile plot: denser toward
// the tail, as HdrHistogram's plotter steps them.
func spectrumQuantiles(n int64) []float64 {
	var qs []float64
	top := -math.Log10(1 - spectrumTop(n))
	for x := 0.0; x < top; x += 0.05 {
		qs = append(qs, 1-math.Pow(10, -x))
	}
	return qs
}
