package report

// FindMax is what a find-max search found in one results directory, as
// the sweep printed it: a row per path, step and payload with the
// bracket (the highest rate that held the SLO, the lowest that missed
// it), and the notes that say why. The report shows it first: the
// per-rate tables that follow are its probes. The cells come formatted.
type FindMax struct {
	Dir   string
	Rows  []FindMaxRow
	Notes []string
}

// FindMaxRow is one search's bracket; Held and Missed count the probes
// of that rate's verdict that held or missed ("2/3"); Flags are the G
// and M flags of any probe of the search.
type FindMaxRow struct {
	Payload, Step, Path, Max, P99, Held, LowestFailing, Missed, Probes, Flags string
}

// FindMaxColumns are the bracket table's headings, in the order of
// FindMaxRow.Cells, for every rendering of it.
var FindMaxColumns = []string{"payload", "step", "path", "max req/s", "p99 at max", "held", "lowest failing", "missed", "probes", "flags"}

// FindMaxLegend explains the held, missed and flags columns, in lines
// that fit 100 columns (TextWidth).
const FindMaxLegend = "held, missed: the probes of that rate's verdict that held or missed the SLO (a rate holds\n" +
	"when 2 of at most 3 probes hold, and fails on 2 misses; the max is reported only so confirmed);\n" +
	"flags: G generator, M machine CPU-saturated during a probe of the search, which then measures\n" +
	"contention"

// Cells are the row's cells in FindMaxColumns' order.
func (r FindMaxRow) Cells() []string {
	return []string{r.Payload, r.Step, r.Path, r.Max, r.P99, r.Held, r.LowestFailing, r.Missed, r.Probes, r.Flags}
}

func markdownFindMax(p *printer, fms []FindMax) {
	for _, fm := range fms {
		p.f("\n## %s: the highest open-loop rate holding the SLO\n\nEach probe is a step of the tables below.\n\n", fm.Dir)
		mdRow(p, FindMaxColumns...)
		p.f("|--:|:--|:--|--:|--:|--:|--:|--:|--:|:--|\n")
		for _, r := range fm.Rows {
			mdRow(p, r.Cells()...)
		}
		p.f("\n%s.\n", FindMaxLegend)
		if len(fm.Notes) > 0 {
			p.f("\n")
			for _, n := range fm.Notes {
				p.f("- %s\n", n)
			}
		}
	}
}
