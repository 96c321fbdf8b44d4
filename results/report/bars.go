package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// cniCharts draws the CNI report's charts: one per metric, the paths along
// the x axis and a bar per CNI mode in each, as the Cilium/Calico report
// and Flannel's comparison show them. None when no path names a mode.
func cniCharts(rows []CNIRow) []chartView {
	if len(rows) == 0 {
		return nil
	}
	g := Grid(rows)
	if len(g.Modes) == 1 && g.Modes[0] == "" {
		return nil
	}
	colors := map[string]string{}
	var legend []legendItem
	for i, m := range g.Modes {
		colors[m] = palette[i%len(palette)]
		legend = append(legend, legendItem{Name: modeLabel(m), Color: colors[m]})
	}
	var out []chartView
	for _, m := range CNIMetrics {
		if !g.Has(m) {
			continue
		}
		note := "a bar per CNI mode; higher is better"
		if m.Unit == "µs" {
			note = "mean latency at the fewest connections, a bar per CNI mode; lower is better"
		}
		out = append(out, chartView{
			Title: fmt.Sprintf("%s by path (%s)", m.Name, m.Unit), Note: note, Wide: true,
			SVG: template.HTML(barSVG("cni-"+strings.ToLower(m.Name), g, m, colors)), Legend: legend,
		})
	}
	return out
}

func modeLabel(m string) string {
	if m == "" {
		return "no CNI"
	}
	return m
}

// barSVG renders one grouped bar chart of the grid's metric.
func barSVG(id string, g CNIGrid, m CNIMetric, colors map[string]string) string {
	const bottom = 96.0 // room for the slanted path names
	w, h := wideW, wideH+bottom-marginB
	top := 0.0
	for _, p := range g.Paths {
		for _, mode := range g.Modes {
			if r := g.Cell(p, mode); r != nil {
				if v, ok := m.Value(*r); ok {
					top = math.Max(top, v)
				}
			}
		}
	}
	step := niceStep(top / 5)
	if step <= 0 {
		step = 1
	}
	top = math.Ceil(top/step) * step
	plotW, plotH := w-marginL-marginR, h-marginT-bottom
	y := func(v float64) float64 { return marginT + plotH*(1-v/top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, id, w, h, html.EscapeString(m.Name))
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, marginL, y(v), w-marginR, y(v), gridColor)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" text-anchor="end" fill="#374151">%s</text>`, marginL-6, y(v)+4, tickFont, compact(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%.1f" font-size="%.1f" fill="#374151" transform="rotate(-90 14 %.1f)" text-anchor="middle">%s</text>`,
		marginT+plotH/2, labelFont, marginT+plotH/2, html.EscapeString(m.Unit))
	groupW := plotW / float64(len(g.Paths))
	barW := groupW * 0.8 / float64(len(g.Modes))
	for i, p := range g.Paths {
		x0 := marginL + float64(i)*groupW + groupW*0.1
		for j, mode := range g.Modes {
			r := g.Cell(p, mode)
			if r == nil {
				continue
			}
			v, ok := m.Value(*r)
			if !ok {
				continue
			}
			x := x0 + float64(j)*barW
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s %s</title></rect>`,
				x, y(v), math.Max(barW-1, 1), marginT+plotH-y(v), colors[mode], html.EscapeString(modeLabel(mode)), html.EscapeString(p), trimZeros(fmt.Sprintf("%.2f", v)), html.EscapeString(m.Unit))
		}
		cx := marginL + (float64(i)+0.5)*groupW
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" fill="#374151" text-anchor="end" transform="rotate(-30 %.1f %.1f)">%s</text>`,
			cx, marginT+plotH+16, tickFont, cx, marginT+plotH+16, html.EscapeString(p))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, marginL, marginT+plotH, w-marginR, marginT+plotH, axisColor)
	b.WriteString(`</svg>`)
	return b.String()
}
