package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

// Options tune the HTML and Markdown reports.
type Options struct {
	Title     string    // HTML; default: from the results ("baseline vs nginx · http1")
	Generated time.Time // HTML: shown in the footer when set
	// CPUPrice is what one CPU costs a month: the ingress sizing table then
	// shows each worker count's monthly cost, and per 1000 requests/s, as
	// NGINX's sizing study does. 0 leaves cost out.
	CPUPrice float64
	// Wide shows every column of the Markdown sweep tables, not only those
	// a reader needs first (HTML and CSV always have every figure).
	Wide bool
	// Published are a study's published figures beside ours (loadgen
	// study's results): shown first, before the tables they come from.
	Published []Published
	// FindMax are the brackets of find-max searches (their directories'
	// findmax.json): shown first, before the probes' tables.
	FindMax []FindMax
}

//go:embed html.tmpl
var htmlTemplate string

//go:embed report.css
var htmlCSS string

//go:embed check.js
var htmlCheck string

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"thousands":    thousands,
	"messagesNote": func() string { return messagesNote },
	"us1":          func(ns float64) float64 { return ns / 1e3 },
	"perWorker":    func(v float64, n int) float64 { return v / float64(max(n, 1)) },
	"pathDot": func(color string) template.HTML {
		return template.HTML(fmt.Sprintf(`<span class="dot" style="background:%s"></span>`, template.HTMLEscapeString(color)))
	},
}).Parse(htmlTemplate))

// HTML writes one self-contained page: the charts of every sweep (latency
// percentiles, throughput, latency added over the baseline, errors and
// timeouts, proxy CPU and memory, per payload), the sweep summary tables,
// the CNI path matrix and the ingress sizing table when the results hold
// their data, and the environment. Styles, charts (inline SVG) and its one
// small script are in the page: it needs no network to show.
func HTML(w io.Writer, sweeps []*Sweep, opt Options) error {
	pg := buildPage(sweeps, opt)
	return pageTmpl.Execute(w, pg)
}

type page struct {
	Title  string
	Lead   string
	Facts  []fact
	TOC    []tocEntry
	Glance []glanceCard
	// GlanceNote is the cards' caption: what "added" is, or that no
	// path is the baseline, so nothing is added.
	GlanceNote string
	CNI        []CNIRow
	// CNICharts are the matrix per metric, a bar per mode, when the paths
	// are named per CNI mode (loadgen lab's MODE.PATH).
	CNICharts      []chartView
	Sizing         []SizingRow
	Published      []Published
	FindMax        []FindMax
	FindMaxColumns []string
	FindMaxLegend  string
	CPUPrice       float64
	Sections       []*section
	Envs           []envView
	Legend         string // the flags legend, when there are sweep tables
	Footer         string
	CSS            template.CSS
	Script         template.JS
}

type fact struct{ Label, Value, Sub string }

type tocEntry struct {
	ID, Title string
	Sub       []tocEntry
}

type glanceCard struct {
	Path, Color, Sweep string
	Baseline           bool
	Rows               []fact
}

type section struct {
	ID, Title, Lead string
	// Notes are warnings on the whole sweep (no path is the baseline).
	Notes  []string
	Blocks []*blockView
	Run    *runView
	// MessagesNote explains the messages columns, when the tables have them.
	MessagesNote string
}

type blockView struct {
	ID, Title string
	Charts    []chartView
	Groups    []headGroup // the header's first row, between path and flags
	Heads     []string    // its second row: the heads of grouped columns
	Span      int         // the figure columns, which a failed row's reason spans
	Rows      []tableRow
	// OverTime are the block's steps over time, a chart each (overtime.go),
	// shown open when there are few.
	OverTime     []chartView
	OverTimeOpen bool
	// Placement is where each step on a cluster ran (placement.go).
	Placement []string
}

// headGroup is a header cell over Span columns ("latency"), or a single
// column's head over both header rows.
type headGroup struct {
	Name   string
	Span   int
	Single bool
}

type chartView struct {
	Title, Note string
	Wide        bool
	SVG         template.HTML
	Legend      []legendItem
}

type legendItem struct {
	Name, Color, Dash string
	Gap               bool // a space before this item (a new group)
}

type tableRow struct {
	Rung, Path, Color string
	Baseline          bool
	Cells             []string // the columns after path, as in Markdown
	Failed            string
	Flags             []flagView
	FirstOfRung       bool
}

type flagView struct{ Letter, Title string }

type runView struct {
	// Failed says the run failed and why (Step.Failure), first thing.
	Failed string
	// Flags are the run's marks (F, I, G, M), as the tables' flags column.
	Flags  []flagView
	Facts  []fact
	Cols   []string
	Values []string
	Chart  chartView
	Time   chartView // the run over time (overtime.go)
	Codes  string
	Errors string
	Notes  []string
	ByName *nameTable // a request mix's figures by name (byname.go)
	ByHost *nameTable // and by host, for a mix on several
	// Messages are streamed answers' messages, Stages a staged
	// schedule's stages (runtables.go).
	Messages, Stages *nameTable
}

type envView struct {
	Name  string
	Facts []fact
	Paths []fact
}

// palette colours paths, in order of first appearance across the report;
// the baseline is always slate.
var palette = []string{"#2563eb", "#ea580c", "#16a34a", "#c026d3", "#dc2626", "#0891b2", "#ca8a04", "#7c3aed", "#db2777", "#65a30d"}

const baselineColor = "#475569"

// percentile line styles of the latency chart.
var pctStyles = []struct {
	Name string
	Dash string
	Get  func(CellStats) float64
}{
	{"p50", "", func(s CellStats) float64 { return s.P50 }},
	{"p90", "7 4", func(s CellStats) float64 { return s.P90 }},
	{"p99", "2 3.5", func(s CellStats) float64 { return s.P99 }},
}

func buildPage(sweeps []*Sweep, opt Options) *page {
	pg := &page{CSS: template.CSS(htmlCSS), Script: template.JS(htmlCheck)}
	colors := colorsFor(sweeps)
	var paths []string
	for _, s := range sweeps {
		for _, p := range s.Paths() {
			if !contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	pg.Title = opt.Title
	if pg.Title == "" {
		pg.Title = defaultTitle(sweeps, paths)
	}
	based, unbased := 0, 0 // the sweeps with cards, with a baseline or needing one
	for i, s := range sweeps {
		sec := buildSection(i, s, colors)
		if len(sweeps) == 1 {
			sec.Lead = "" // the page's lead says it
		}
		pg.Sections = append(pg.Sections, sec)
		te := tocEntry{ID: sec.ID, Title: sec.Title}
		for _, b := range sec.Blocks {
			t := b.Title
			if len(sweeps) > 1 {
				t = orDash(s.Protocol()) + " · " + t
			}
			te.Sub = append(te.Sub, tocEntry{ID: b.ID, Title: t})
		}
		pg.TOC = append(pg.TOC, te)
		cards := glance(s, colors, len(sweeps) > 1)
		pg.Glance = append(pg.Glance, cards...)
		if len(cards) > 0 {
			if noBaselineNote(s.Baseline(), Cells(s.Steps)) != "" {
				unbased++
			} else {
				based++
			}
		}
		pg.Envs = append(pg.Envs, envFor(s))
	}
	if len(sweeps) == 1 {
		pg.Lead = strings.Join(sweeps[0].describe(), " · ")
	} else {
		pg.Lead = plural(len(sweeps), "result set") + ": " + strings.Join(names(sweeps), ", ")
	}
	pg.GlanceNote = glanceNote(based, unbased)
	pg.Facts = pageFacts(sweeps)
	pg.CNI = CNIMatrix(sweeps)
	pg.CNICharts = cniCharts(pg.CNI)
	pg.Sizing = Sizing(sweeps)
	for i, t := range opt.Published {
		t.Chart = publishedChart(i, t)
		pg.Published = append(pg.Published, t)
	}
	if len(opt.Published) > 0 && opt.Title == "" {
		pg.Title = opt.Published[0].Title
	}
	pg.FindMax, pg.FindMaxColumns, pg.FindMaxLegend = opt.FindMax, FindMaxColumns, FindMaxLegend
	pg.CPUPrice = opt.CPUPrice
	var fl []string
	for _, k := range []string{"F", "I", "G", "M"} {
		fl = append(fl, k+" "+FlagMeaning(k))
	}
	for _, sec := range pg.Sections {
		if len(sec.Blocks) > 0 {
			pg.Legend = strings.Join(fl, " · ")
		}
	}
	pg.Footer = "Made by loadgen report"
	if !opt.Generated.IsZero() {
		pg.Footer += " on " + opt.Generated.UTC().Format("2006-01-02 15:04 UTC")
	}
	return pg
}

func names(sweeps []*Sweep) []string {
	out := make([]string, len(sweeps))
	for i, s := range sweeps {
		out[i] = s.Name
	}
	return out
}

func defaultTitle(sweeps []*Sweep, paths []string) string {
	var protos []string
	for _, s := range sweeps {
		if p := s.Protocol(); p != "" && !contains(protos, p) {
			protos = append(protos, p)
		}
	}
	t := strings.Join(paths, " vs ")
	if len(paths) > 4 {
		t = fmt.Sprintf("%d paths", len(paths))
	}
	if len(sweeps) == 1 && sweeps[0].Single() {
		t = sweeps[0].Steps[0].Run.Config.Target
	}
	if len(protos) > 0 {
		t += " · " + strings.Join(protos, ", ")
	}
	return t
}

func colorsFor(sweeps []*Sweep) map[string]string {
	colors := map[string]string{}
	n := 0
	for _, s := range sweeps {
		base := s.Baseline()
		for _, p := range s.Paths() {
			if _, ok := colors[p]; ok {
				continue
			}
			if p == base {
				colors[p] = baselineColor
				continue
			}
			colors[p] = palette[n%len(palette)]
			n++
		}
	}
	return colors
}
