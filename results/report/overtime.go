package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"loadgen/results"
)

// overTime is the chart of one run over time (its Timeline): requests/s,
// latency (p50, p99, p99.9 where an interval counted enough requests) and
// errors per interval, in three panes on one time axis, the warm-up
// shaded and outages (nothing answered, requests failing) marked. Inline
// SVG, drawn by hand as lineChart is.
type overTime struct {
	ID        string
	Title     string
	Wide      bool
	Color     string // requests/s: the path's colour
	Intervals []results.Interval
	Outages   [][2]time.Duration // results.RunOutages: shaded red
}

// The over-time chart's colours and dashes.
const (
	otP50, otP99, otP999         = "#0d9488", "#ea580c", "#9f1239"
	otP999Dash                   = "5 3"
	otErrors, otTimeouts         = "#f87171", "#7f1d1d"
	otWarmup, otOutage           = "#eef0f3", "#fde2e2"
	otPaneGap            float64 = 28
	otHoverMax                   = 600 // intervals with a tooltip each, at most
)

// overTimeView is run's over-time chart, or a zero chartView when the run
// has no timeline (results of loadgen before it kept one).
func overTimeView(id, title string, run *results.Run, color string, wide bool) chartView {
	if run == nil || len(run.Timeline) == 0 {
		return chartView{}
	}
	if color == "" {
		color = baselineColor
	}
	o := &overTime{ID: id, Title: title, Wide: wide, Color: color, Intervals: run.Timeline, Outages: results.RunOutages(run)}
	note := "per " + intervalName(run.Timeline) + " interval; the warm-up shaded grey"
	if len(o.Outages) > 0 {
		note += ", outages (nothing answered, requests failing) red"
	}
	legend := []legendItem{{Name: "requests/s", Color: color},
		{Name: "p50", Color: otP50, Gap: true}, {Name: "p99", Color: otP99}}
	if o.has(func(iv results.Interval) bool { return iv.P999 > 0 }) {
		legend = append(legend, legendItem{Name: "p99.9", Color: otP999, Dash: otP999Dash})
	}
	legend = append(legend, legendItem{Name: "errors", Color: otErrors, Gap: true}, legendItem{Name: "of which timeouts", Color: otTimeouts})
	return chartView{Title: title, Note: note, Wide: wide, SVG: template.HTML(o.SVG()), Legend: legend}
}

// intervalName is the timeline's interval: the first measured one's
// (not the last, which may be cut short), to the second: "1s".
func intervalName(tl []results.Interval) string {
	d := tl[0].Duration.D()
	for _, iv := range tl[:len(tl)-1] {
		if !iv.Warmup {
			d = iv.Duration.D()
			break
		}
	}
	return fmtSeconds(max(d.Round(time.Second), time.Second).Seconds())
}

func (o *overTime) has(f func(results.Interval) bool) bool {
	for _, iv := range o.Intervals {
		if f(iv) {
			return true
		}
	}
	return false
}

// pane is one of the chart's stacked plots.
type pane struct {
	top, h float64
	label  string
	ys     yScale
	empty  string // said in the pane when there is nothing to plot
}

func (p pane) y(v float64) float64 { return p.top + p.h - p.ys.pos(v)*p.h }

// SVG renders the chart.
func (o *overTime) SVG() string {
	w, h := chartW, 460.0
	if o.Wide {
		w, h = wideW, 540
	}
	pw := w - marginL - marginR
	ph := h - marginT - marginB - 2*otPaneGap
	ivs := o.Intervals

	// X: seconds from the start of the measured window.
	xlo, xhi := ivs[0].Start.D().Seconds(), ivs[len(ivs)-1].End().D().Seconds()
	if xhi <= xlo {
		xhi = xlo + 1
	}
	xp := func(s float64) float64 { return marginL + (s-xlo)/(xhi-xlo)*pw }
	mid := func(iv results.Interval) float64 { return (iv.Start.D() + iv.Duration.D()/2).Seconds() }

	// The panes' series.
	rps := series{Name: "requests/s", Color: o.Color}
	p50 := series{Name: "p50", Color: otP50}
	p99 := series{Name: "p99", Color: otP99}
	p999 := series{Name: "p99.9", Color: otP999, Dash: otP999Dash}
	lat := func(d results.Duration) float64 {
		if d <= 0 {
			return math.NaN() // no request ended: a gap
		}
		return float64(d)
	}
	var maxErr float64
	for _, iv := range ivs {
		x := mid(iv)
		rps.Points = append(rps.Points, point{X: x, Y: iv.RPS})
		p50.Points = append(p50.Points, point{X: x, Y: lat(iv.P50)})
		p99.Points = append(p99.Points, point{X: x, Y: lat(iv.P99)})
		p999.Points = append(p999.Points, point{X: x, Y: lat(iv.P999)})
		maxErr = math.Max(maxErr, float64(iv.Errors))
	}
	rpsChart := &lineChart{YFmt: compact, Series: []series{rps}}
	latChart := &lineChart{LogY: true, YFmt: latencyTick, Series: []series{p50, p99, p999}}
	errChart := &lineChart{YFmt: compactInt, Series: []series{{Points: []point{{0, 0, ""}, {0, math.Max(maxErr, 1), ""}}}}}

	panes := []pane{
		{top: marginT, h: ph * 0.32, label: "requests/s", ys: rpsChart.yAxis()},
		{label: "latency", ys: latChart.yAxis()},
		{label: "errors", ys: errChart.yAxis()},
	}
	panes[1].top, panes[1].h = panes[0].top+panes[0].h+otPaneGap, ph*0.44
	panes[2].top, panes[2].h = panes[1].top+panes[1].h+otPaneGap, ph*0.24
	if !latChart.drawn() {
		panes[1].empty = "no request ended"
	}
	if maxErr == 0 {
		panes[2].empty = "no errors"
	}
	bottom := panes[2].top + panes[2].h

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart overtime" id="%s" viewBox="0 0 %g %g" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		html.EscapeString(o.ID), w, h, html.EscapeString(o.Title))

	// The warm-up, shaded behind everything; then the outages.
	if first := ivs[0]; first.Warmup && first.Start < 0 {
		x0, x1 := xp(xlo), xp(math.Min(0, xhi))
		fmt.Fprintf(&b, `<rect class="warmup" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>warm-up: %s, not in the results</title></rect>`,
			x0, marginT, x1-x0, bottom-marginT, otWarmup, html.EscapeString(fmtSeconds(-first.Start.D().Seconds())))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%g" fill="#6b7280">warm-up</text>`, x0+5, marginT+12, tickFont-1)
	}
	for _, out := range o.Outages {
		x0, x1 := xp(out[0].Seconds()), xp(out[1].Seconds())
		var failed int64
		for _, iv := range ivs {
			// The intervals that overlap it: an outage may begin part-way
			// through one (its failures are counted whole).
			if !iv.Warmup && iv.End().D() > out[0] && iv.Start.D() < out[1] {
				failed += iv.Errors
			}
		}
		fmt.Fprintf(&b, `<rect class="outage" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>outage from %s to %s: nothing answered, %s requests failed</title></rect>`,
			x0, marginT, math.Max(x1-x0, 1), bottom-marginT, otOutage,
			fmtSeconds(out[0].Seconds()), fmtSeconds(out[1].Seconds()), thousands(float64(failed)))
	}

	// Each pane: grid, y ticks, its label.
	b.WriteString(`<g class="grid">`)
	for _, p := range panes {
		for _, t := range p.ys.minor {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="0.6" stroke-dasharray="2 3"/>`,
				marginL, marginL+pw, p.y(t), p.y(t), gridColor)
		}
		last := math.Inf(1) // the last label's y: labels closer than a line of text are left out
		for _, t := range p.ys.ticks {
			y := p.y(t.At)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, marginL, marginL+pw, y, y, gridColor)
			if t.Label == "" || last-y < tickFont+3 {
				continue
			}
			last = y
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="%g" fill="#4b5563">%s</text>`,
				marginL-8, y, tickFont, html.EscapeString(t.Label))
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, marginL, marginL+pw, p.top+p.h, p.top+p.h, axisColor)
		fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" font-size="%g" fill="#6b7280">%s</text>`,
			p.top+p.h/2, labelFont, html.EscapeString(p.label))
		if p.empty != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%g" fill="#9ca3af">%s</text>`,
				marginL+pw/2, p.top+p.h/2, tickFont, html.EscapeString(p.empty))
		}
	}
	b.WriteString(`</g>`)

	// The time axis, under the last pane.
	for _, t := range timeTicks(xlo, xhi) {
		x := xp(t)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, x, x, bottom, bottom+5, axisColor)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%g" fill="#374151">%s</text>`,
			x, bottom+19, tickFont, html.EscapeString(fmtSeconds(t)))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%g" fill="#6b7280">time from the start of the measured window</text>`,
		marginL+pw/2, h-6, labelFont)

	// Errors: a bar per interval, timeouts darker over them.
	b.WriteString(`<g class="bars">`)
	ep := panes[2]
	for _, iv := range ivs {
		if iv.Errors == 0 {
			continue
		}
		x0, x1 := xp(iv.Start.D().Seconds()), xp(iv.End().D().Seconds())
		bw := math.Max((x1-x0)*0.8, 1)
		bx := x0 + (x1-x0-bw)/2
		y := ep.y(float64(iv.Errors))
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, bx, y, bw, ep.top+ep.h-y, otErrors)
		if iv.Timeouts > 0 {
			y := ep.y(float64(iv.Timeouts))
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, bx, y, bw, ep.top+ep.h-y, otTimeouts)
		}
	}
	b.WriteString(`</g>`)

	// Lines: requests/s in the first pane, latencies in the second.
	b.WriteString(`<g class="lines" fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">`)
	n := 0
	line := func(p pane, s series, plottable func(float64) bool) {
		var d strings.Builder
		pen, pts := false, 0
		for _, pt := range s.Points {
			if !plottable(pt.Y) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, xp(pt.X), p.y(pt.Y))
			pen = true
			pts++
		}
		if pts == 0 {
			return
		}
		dash := ""
		if s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
		}
		fmt.Fprintf(&b, `<path class="series" data-series="%d" d="%s" stroke="%s"%s><title>%s</title></path>`,
			n, d.String(), s.Color, dash, html.EscapeString(s.Name))
		n++
	}
	line(panes[0], rps, rpsChart.plottable)
	for _, s := range latChart.Series {
		line(panes[1], s, latChart.plottable)
	}
	b.WriteString(`</g>`)

	// A point per interval where there are few (a line of one point has
	// no length), and a tooltip per interval over all three panes.
	b.WriteString(`<g class="marks">`)
	if len(ivs) <= 60 {
		for _, pt := range rps.Points {
			fmt.Fprintf(&b, `<circle class="mark" cx="%.1f" cy="%.1f" r="2.6" fill="%s" stroke="#fff" stroke-width="1"/>`, xp(pt.X), panes[0].y(pt.Y), rps.Color)
		}
	}
	if len(ivs) <= otHoverMax {
		for _, iv := range ivs {
			x0, x1 := xp(iv.Start.D().Seconds()), xp(iv.End().D().Seconds())
			fmt.Fprintf(&b, `<rect class="hover" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#000" fill-opacity="0"><title>%s</title></rect>`,
				x0, marginT, math.Max(x1-x0, 0.5), bottom-marginT, html.EscapeString(intervalTip(iv)))
		}
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}

// intervalTip describes one interval for its tooltip.
func intervalTip(iv results.Interval) string {
	parts := []string{fmt.Sprintf("%s–%s", fmtSeconds(iv.Start.D().Seconds()), fmtSeconds(iv.End().D().Seconds()))}
	if iv.Warmup {
		parts[0] += " (warm-up)"
	}
	parts = append(parts, thousands(iv.RPS)+" req/s")
	if iv.P50 > 0 {
		parts = append(parts, "p50 "+latencyTick(float64(iv.P50)), "p99 "+latencyTick(float64(iv.P99)))
	}
	if iv.P999 > 0 {
		parts = append(parts, "p99.9 "+latencyTick(float64(iv.P999)))
	}
	e := fmt.Sprintf("%s errors", thousands(float64(iv.Errors)))
	if iv.Timeouts > 0 {
		e += fmt.Sprintf(" (%s timeouts)", thousands(float64(iv.Timeouts)))
	}
	parts = append(parts, e)
	if iv.Outage {
		parts = append(parts, "outage")
	}
	return strings.Join(parts, " · ")
}

// timeSteps are the time axis's tick steps, in seconds.
var timeSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400}

// timeTicks are the ticks of a time axis from lo to hi seconds: about
// eight, on round times, 0 among them.
func timeTicks(lo, hi float64) []float64 {
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if (hi-lo)/s <= 9 {
			step = s
			break
		}
	}
	var out []float64
	for t := math.Ceil(lo/step-1e-9) * step; t <= hi+1e-9; t += step {
		out = append(out, math.Round(t/step)*step)
	}
	return out
}

// fmtSeconds writes a time in seconds as a person reads it: "0s", "2.5s",
// "-5s", "1m30s", "2h".
func fmtSeconds(s float64) string {
	d := time.Duration(math.Round(s*10)) * 100 * time.Millisecond
	if d == 0 {
		return "0s"
	}
	str := d.String()
	if strings.HasSuffix(str, "m0s") {
		str = strings.TrimSuffix(str, "0s")
	}
	if strings.HasSuffix(str, "h0m") {
		str = strings.TrimSuffix(str, "0m")
	}
	return str
}

// openOverTime is how many steps a block's over-time charts show open.
const openOverTime = 4

// stepsOverTime are the over-time charts of a sweep block's steps, in the
// table's order, and whether to show them open (few of them).
func stepsOverTime(id string, cells []*Cell, colors map[string]string) ([]chartView, bool) {
	var out []chartView
	for _, c := range cells {
		for _, st := range c.Steps {
			if st.Run == nil || len(st.Run.Timeline) == 0 {
				continue
			}
			title := c.Rung + " · " + c.Path
			if len(c.Steps) > 1 {
				title += fmt.Sprintf(" · repeat %d", st.Repeat)
			}
			cv := overTimeView(fmt.Sprintf("%s-t%d", id, len(out)+1), title, st.Run, colors[c.Path], false)
			if st.Run.Aborted != "" {
				cv.Note = upperFirst(st.Run.Aborted) + "; " + cv.Note
			}
			out = append(out, cv)
		}
	}
	return out, len(out) <= openOverTime
}
