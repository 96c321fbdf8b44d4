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

// barSVG renders one grouped bar chart of the grid's metric: a group per
// path, a bar per mode.
func barSVG(id string, g CNIGrid, m CNIMetric, colors map[string]string) string {
	var series, cols []string
	for _, mode := range g.Modes {
		series = append(series, modeLabel(mode))
		cols = append(cols, colors[mode])
	}
	return groupedBarSVG(id, m.Name, m.Unit, g.Paths, series, cols, func(i, j int) (float64, bool) {
		r := g.Cell(g.Paths[i], g.Modes[j])
		if r == nil {
			return 0, false
		}
		return m.Value(*r)
	})
}

// groupedBarSVG renders a grouped bar chart: a group per name of groups,
// in it a bar per series whose value(group, series) is known.
func groupedBarSVG(id, name, unit string, groups, series, colors []string, value func(i, j int) (float64, bool)) string {
	const bottom = 96.0 // room for the slanted group names
	w, h := wideW, wideH+bottom-marginB
	top := 0.0
	for i := range groups {
		for j := range series {
			if v, ok := value(i, j); ok {
				top = math.Max(top, v)
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
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, id, w, h, html.EscapeString(name))
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, marginL, y(v), w-marginR, y(v), gridColor)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" text-anchor="end" fill="#374151">%s</text>`, marginL-6, y(v)+4, tickFont, compact(v))
	}
	fmt.Fprintf(&b, `<text x="14" y="%.1f" font-size="%.1f" fill="#374151" transform="rotate(-90 14 %.1f)" text-anchor="middle">%s</text>`,
		marginT+plotH/2, labelFont, marginT+plotH/2, html.EscapeString(unit))
	groupW := plotW / float64(max(len(groups), 1))
	barW := groupW * 0.8 / float64(max(len(series), 1))
	for i, g := range groups {
		x0 := marginL + float64(i)*groupW + groupW*0.1
		for j, sr := range series {
			v, ok := value(i, j)
			if !ok {
				continue
			}
			x := x0 + float64(j)*barW
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s %s</title></rect>`,
				x, y(v), math.Max(barW-1, 1), marginT+plotH-y(v), colors[j%len(colors)], html.EscapeString(sr), html.EscapeString(g), trimZeros(fmt.Sprintf("%.2f", v)), html.EscapeString(unit))
		}
		cx := marginL + (float64(i)+0.5)*groupW
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%.1f" fill="#374151" text-anchor="end" transform="rotate(-30 %.1f %.1f)">%s</text>`,
			cx, marginT+plotH+16, tickFont, cx, marginT+plotH+16, html.EscapeString(g))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, marginL, marginT+plotH, w-marginR, marginT+plotH, axisColor)
	b.WriteString(`</svg>`)
	return b.String()
}
