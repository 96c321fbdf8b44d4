package report

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
}

// PublishedRow is one row: the published figure, ours, and both as a
// ratio to the baseline row.
type PublishedRow struct {
	Key, Published, Measured, PubRatio, MeasRatio, Note string
}

func markdownPublished(p *printer, tables []Published) {
	if len(tables) == 0 {
		return
	}
	p.f("\n## Published beside measured: %s\n\nPublished: %s\n", tables[0].Title, tables[0].Source)
	for _, t := range tables {
		p.f("\n### %s (%s)\n\n", t.Metric, t.Unit)
		mdRow(p, "row", "published", "measured", "published ratio to "+t.Baseline, "measured ratio to "+t.Baseline, "note")
		p.f("|:--|--:|--:|--:|--:|:--|\n")
		for _, r := range t.Rows {
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
