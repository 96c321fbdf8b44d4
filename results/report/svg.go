package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// lineChart is one chart of the HTML report: lines over an x axis of
// ladder steps (or any numbers with labelled ticks), drawn as inline SVG
// by hand so the report needs no script, font or network to show it.
type lineChart struct {
	ID     string
	Title  string
	Note   string // a short caption: what the lines are
	YLabel string
	XLabel string
	XTicks []tick // positions on the x axis and their labels
	LogY   bool
	Zero   bool // draw a stronger line at y = 0 (deltas)
	YFmt   func(float64) string
	Series []series
	Wide   bool    // spans the whole row
	XPad   float64 // room left of the first and right of the last x tick (0.5 for ladder steps)
}

type tick struct {
	At    float64
	Label string
}

type series struct {
	Path    string // the path it belongs to (its colour)
	Name    string // in tooltips
	Color   string
	Dash    string // stroke-dasharray; "" is solid
	Markers bool
	Points  []point
}

// point is one value; a NaN Y is a gap (a failed step).
type point struct {
	X, Y float64
	Tip  string
}

// Chart geometry, in SVG user units (the SVG scales to its box).
const (
	chartW, chartH       float64 = 560, 300
	wideW, wideH         float64 = 1140, 340
	marginL, marginR     float64 = 64, 18
	marginT, marginB     float64 = 14, 46
	tickFont, labelFont  float64 = 12, 12.5
	gridColor, axisColor         = "#e5e7eb", "#9ca3af"
)

// drawn tells whether the chart has anything to draw.
func (c *lineChart) drawn() bool {
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !math.IsNaN(p.Y) && (!c.LogY || p.Y > 0) {
				return true
			}
		}
	}
	return false
}

// SVG renders the chart.
func (c *lineChart) SVG() string {
	w, h := chartW, chartH
	if c.Wide {
		w, h = wideW, wideH
	}
	pw, ph := w-marginL-marginR, h-marginT-marginB
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %g %g" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		html.EscapeString(c.ID), w, h, html.EscapeString(c.Title))

	// X scale.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, t := range c.XTicks {
		xmin, xmax = math.Min(xmin, t.At), math.Max(xmax, t.At)
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	pad := c.XPad
	if xmax == xmin && pad == 0 {
		pad = 1
	}
	xlo, xhi := xmin-pad, xmax+pad
	if xhi == xlo {
		xhi = xlo + 1
	}
	xp := func(x float64) float64 { return marginL + (x-xlo)/(xhi-xlo)*pw }

	// Y scale.
	ys := c.yAxis()
	yp := func(y float64) float64 { return marginT + ph - (ys.pos(y))*ph }

	// Grid and y ticks.
	b.WriteString(`<g class="grid">`)
	for _, t := range ys.minor {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="0.6" stroke-dasharray="2 3"/>`,
			marginL, marginL+pw, yp(t), yp(t), gridColor)
	}
	for _, t := range ys.ticks {
		y := yp(t.At)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, marginL, marginL+pw, y, y, gridColor)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" font-size="%g" fill="#4b5563">%s</text>`,
			marginL-8, y, tickFont, html.EscapeString(t.Label))
	}
	if c.Zero && ys.lo < 0 && ys.hi > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#6b7280" stroke-width="1.2"/>`, marginL, marginL+pw, yp(0), yp(0))
	}
	b.WriteString(`</g>`)

	// X axis.
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, marginL, marginL+pw, marginT+ph, marginT+ph, axisColor)
	for _, t := range c.XTicks {
		x := xp(t.At)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, x, x, marginT+ph, marginT+ph+5, axisColor)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%g" fill="#374151">%s</text>`,
			x, marginT+ph+19, tickFont, html.EscapeString(t.Label))
	}
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%g" fill="#6b7280">%s</text>`,
			marginL+pw/2, h-6, labelFont, html.EscapeString(c.XLabel))
	}
	if c.YLabel != "" {
		fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" font-size="%g" fill="#6b7280">%s</text>`,
			marginT+ph/2, labelFont, html.EscapeString(c.YLabel))
	}

	// Lines, then markers above every line.
	fmt.Fprintf(&b, `<g class="lines" fill="none" stroke-width="2.2" stroke-linejoin="round" stroke-linecap="round">`)
	for i, s := range c.Series {
		var d strings.Builder
		pen := false
		for _, p := range s.Points {
			if !c.plottable(p.Y) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, xp(p.X), yp(p.Y))
			pen = true
		}
		dash := ""
		if s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
		}
		fmt.Fprintf(&b, `<path class="series" data-series="%d" d="%s" stroke="%s"%s><title>%s</title></path>`,
			i, d.String(), s.Color, dash, html.EscapeString(s.Name))
	}
	b.WriteString(`</g><g class="marks">`)
	for _, s := range c.Series {
		if !s.Markers {
			continue
		}
		for _, p := range s.Points {
			if !c.plottable(p.Y) {
				continue
			}
			tip := p.Tip
			if tip == "" {
				tip = s.Name + ": " + c.fmtY(p.Y)
			}
			fmt.Fprintf(&b, `<circle class="mark" cx="%.1f" cy="%.1f" r="3.4" fill="%s" stroke="#fff" stroke-width="1.2"><title>%s</title></circle>`,
				xp(p.X), yp(p.Y), s.Color, html.EscapeString(tip))
		}
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}

func (c *lineChart) plottable(y float64) bool {
	return !math.IsNaN(y) && !math.IsInf(y, 0) && (!c.LogY || y > 0)
}

func (c *lineChart) fmtY(v float64) string {
	if c.YFmt != nil {
		return c.YFmt(v)
	}
	return compact(v)
}

// yScale maps values to [0, 1] of the plot's height.
type yScale struct {
	lo, hi float64
	log    bool
	ticks  []tick
	minor  []float64
}

func (s yScale) pos(y float64) float64 {
	if s.log {
		return (math.Log10(y) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	}
	return (y - s.lo) / (s.hi - s.lo)
}

func (c *lineChart) yAxis() yScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.plottable(p.Y) {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}
	if c.LogY {
		return c.logAxis(lo, hi)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if hi == lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	s := yScale{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
	if s.hi-hi < step*0.05 && hi > 0 { // headroom above the highest point
		s.hi += step
	}
	for v := s.lo; v <= s.hi+step/1e6; v += step {
		v := math.Round(v/step) * step
		s.ticks = append(s.ticks, tick{v, c.fmtY(v)})
	}
	return s
}

func (c *lineChart) logAxis(lo, hi float64) yScale {
	if math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	if hi <= lo*1.0001 { // one value: put it mid-plot
		lo, hi = lo/1.5, hi*1.5
	}
	// The axis ends on gridlines that carry labels: finer steps for a
	// narrow range, whole decades for a wide one.
	steps := []float64{1, 2, 3, 4, 5, 6, 8, 10}
	switch d := math.Log10(hi / lo); {
	case d > 3:
		steps = []float64{1, 10}
	case d > 1:
		steps = []float64{1, 2, 5, 10}
	}
	s := yScale{log: true, lo: roundLog(lo, steps, false), hi: roundLog(hi, steps, true)}
	decades := math.Log10(s.hi / s.lo)
	for e := math.Floor(math.Log10(s.lo) + 1e-9); math.Pow(10, e) <= s.hi*1.0001; e++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, e)
			if v < s.lo*0.9999 || v > s.hi*1.0001 {
				continue
			}
			labelled := m == 1 || (decades <= 3.2 && (m == 2 || m == 5)) || (decades <= 1.3 && m != 7 && m != 9)
			if labelled {
				s.ticks = append(s.ticks, tick{v, c.fmtY(v)})
			} else {
				s.minor = append(s.minor, v)
			}
		}
	}
	return s
}

// roundLog rounds v down (or up) to one of steps × a power of ten.
func roundLog(v float64, steps []float64, up bool) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)+1e-9))
	if up {
		for _, m := range steps {
			if m*e >= v*0.9999 {
				return m * e
			}
		}
		return 10 * e
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i]*e <= v*1.0001 {
			return steps[i] * e
		}
	}
	return e
}

// niceStep rounds a raw step up to 1, 2 or 5 × a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*e*1.0001 {
			return m * e
		}
	}
	return 10 * e
}

// compact prints a number for an axis: 1.2k, 35k, 1.5M, 0.25.
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e3:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 10:
		return trimZeros(fmt.Sprintf("%.1f", v))
	case a >= 1:
		return trimZeros(fmt.Sprintf("%.2f", v))
	}
	return trimZeros(fmt.Sprintf("%.3f", v))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// latencyTick prints a latency in nanoseconds for an axis: 250µs, 1ms, 1.5s.
func latencyTick(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "−", -v
	}
	switch {
	case v == 0:
		return "0"
	case v >= 1e9:
		return sign + trimZeros(fmt.Sprintf("%.2f", v/1e9)) + "s"
	case v >= 1e6:
		return sign + trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "ms"
	case v >= 1e3:
		return sign + trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "µs"
	}
	return sign + trimZeros(fmt.Sprintf("%.0f", v)) + "ns"
}
