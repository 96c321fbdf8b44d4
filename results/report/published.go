package report

import (
	"fmt"
	"html/template"
)

// Published is one table of a published study beside what was measured
// here (loadgen study): a row per CNI, backend or CPU count, each figure
// and its ratio to the study's baseline row, and whether each of the
// study's orderings holds here. The cells come formatted, "–" for a figure
// that is missing.
type Published struct {
	Study, Title, Source string
	Metric, Unit         string
	Baseline             string
	Rows                 []PublishedRow
	Verdicts             []string
	Caveat               string
	// OwnRatios tells whether the rows have a ratio to their own run's
	// baseline path too (runs made apart, one CNI each): a column more.
	OwnRatios bool
	Chart     chartView // set by the HTML page
}

// PublishedRow is one row: the published figure, ours, and both as a
// ratio to the baseline row.
type PublishedRow struct {
	Key, Published, Measured, PubRatio, MeasRatio, Note string
	// OwnRatio is the measured figure over its own run's baseline path
	// (Published.OwnRatios).
	OwnRatio string
	// The ratios as numbers, for the chart; Has* false when missing.
	PubRatioV, MeasRatioV     float64
	HasPubRatio, HasMeasRatio bool
}

// publishedChart is the study's bars: a group per row, its published
// ratio to the baseline row beside ours, as Flannel's and the CNI report's
// bar charts compare their rows.
func publishedChart(i int, t Published) chartView {
	keys := make([]string, len(t.Rows))
	for k, r := range t.Rows {
		keys[k] = r.Key
	}
	colors := []string{"#9ca3af", palette[0]}
	svg := groupedBarSVG(fmt.Sprintf("published-%d", i), t.Metric, "ratio to "+t.Baseline, keys, []string{"published", "measured"}, colors,
		func(g, s int) (float64, bool) {
			r := t.Rows[g]
			if s == 0 {
				return r.PubRatioV, r.HasPubRatio
			}
			return r.MeasRatioV, r.HasMeasRatio
		})
	return chartView{Title: t.Metric + ", as a ratio to " + t.Baseline, Note: "published beside measured: absolute figures differ by testbed, the ratios compare",
		Wide: true, SVG: template.HTML(svg), Legend: []legendItem{{Name: "published", Color: colors[0]}, {Name: "measured here", Color: colors[1]}}}
}

func markdownPublished(p *printer, tables []Published) {
	if len(tables) == 0 {
		return
	}
	p.f("\n## Published beside measured: %s\n\nPublished: %s\n", tables[0].Title, tables[0].Source)
	for _, t := range tables {
		p.f("\n### %s (%s)\n\n", t.Metric, t.Unit)
		if t.OwnRatios {
			mdRow(p, "row", "published", "measured", "published ratio to "+t.Baseline, "measured ratio to "+t.Baseline, "ratio to its run's "+t.Baseline, "note")
			p.f("|:--|--:|--:|--:|--:|--:|:--|\n")
		} else {
			mdRow(p, "row", "published", "measured", "published ratio to "+t.Baseline, "measured ratio to "+t.Baseline, "note")
			p.f("|:--|--:|--:|--:|--:|:--|\n")
		}
		for _, r := range t.Rows {
			if t.OwnRatios {
				mdRow(p, r.Key, r.Published, r.Measured, r.PubRatio, r.MeasRatio, r.OwnRatio, r.Note)
				continue
			}
			mdRow(p, r.Key, r.Published, r.Measured, r.PubRatio, r.MeasRatio, r.Note)
		}
		if len(t.Verdicts) > 0 {
			p.f("\n")
			for _, v := range t.Verdicts {
				p.f("- %s\n", v)
			}
		}
	}
	p.f("\n%s.\n", tables[0].Caveat)
}
