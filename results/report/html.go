package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
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

func pageFacts(sweeps []*Sweep) []fact {
	var started time.Time
	var n stepCounts
	single := true
	var hosts []string
	for _, s := range sweeps {
		if t := s.Started(); !t.IsZero() && (started.IsZero() || t.Before(started)) {
			started = t
		}
		n.add(s)
		single = single && s.Single()
		if h := hostnames(s.Env().Hostname); h != "" && !contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	var f []fact
	if !started.IsZero() {
		f = append(f, fact{"Started", started.UTC().Format("2006-01-02 15:04 UTC"), ""})
	}
	if single && len(sweeps) == 1 {
		f = append(f, fact{"Run", n.runText(), ""})
	} else {
		f = append(f, fact{"Steps", n.text(), ""})
	}
	if len(sweeps) > 0 {
		e := sweeps[0].Env()
		m := strings.Join(hosts, ", ")
		if e.NumCPU > 0 {
			m += fmt.Sprintf(" · %d CPUs", e.NumCPU)
			if e.CPUModel != "" {
				m += " (" + e.CPUModel + ")"
			}
		}
		if m != "" {
			f = append(f, fact{"Machine", m, ""})
		}
	}
	return f
}

// stepCounts count a report's steps by how they ended, as the sweep that
// ran them did: ok, failed (no run, or no request of it succeeded: Step.
// Failure), aborted (--abort-on-fail), interrupted (Ctrl-C), and those of
// the plan that never ran.
type stepCounts struct{ planned, ok, failed, aborted, interrupted int }

func (n *stepCounts) add(s *Sweep) {
	planned := len(s.Steps)
	if s.Manifest != nil {
		planned = max(planned, len(s.Manifest.Steps))
	}
	n.planned += planned
	for _, st := range s.Steps {
		switch {
		case st.Run != nil && st.Run.Aborted != "":
			n.aborted++
		case st.Run == nil && st.Interrupted, st.Run != nil && st.Run.Interrupted:
			n.interrupted++
		case st.Failure() != "":
			n.failed++
		default:
			n.ok++
		}
	}
}

// text is "1 of 3 ok, 1 aborted, 1 not run".
func (n stepCounts) text() string {
	s := fmt.Sprintf("%d of %d ok", n.ok, n.planned)
	for _, c := range []struct {
		k    int
		what string
	}{{n.failed, "failed"}, {n.aborted, "aborted"}, {n.interrupted, "interrupted"}, {n.planned - n.ok - n.failed - n.aborted - n.interrupted, "not run"}} {
		if c.k > 0 {
			s += fmt.Sprintf(", %d %s", c.k, c.what)
		}
	}
	return s
}

// runText is how a single run ended: "ok", "failed", "aborted",
// "interrupted".
func (n stepCounts) runText() string {
	switch {
	case n.failed > 0:
		return "failed"
	case n.aborted > 0:
		return "aborted"
	case n.interrupted > 0:
		return "interrupted"
	}
	return "ok"
}

func buildSection(i int, s *Sweep, colors map[string]string) *section {
	sec := &section{ID: fmt.Sprintf("s%d", i+1)}
	if s.Single() {
		sec.Title = "Run " + s.Name
		sec.Lead = strings.Join(s.describe(), " · ")
		sec.Run = buildRun(sec.ID, s, colors)
		return sec
	}
	sec.Title = "Sweep " + s.Name
	sec.Lead = strings.Join(s.describe(), " · ")
	t := newTable(s.Baseline(), s.Steps, s.Hops())
	if n := noBaselineNote(s.Baseline(), Cells(s.Steps)); n != "" {
		sec.Notes = append(sec.Notes, n)
	}
	shown, _ := t.choose(0, true)
	var figures []int // the columns between path and flags
	for _, k := range shown {
		if key := t.cols[k].key; key != "step" && key != "path" && key != "flags" {
			figures = append(figures, k)
		}
		if t.cols[k].key == "msgs/s" {
			sec.MessagesNote = "Messages: of the streamed answers, medians over repeats; " + messagesNote + " (— no answer had two)."
		}
	}
	var groups []headGroup
	var heads []string
	for _, k := range figures {
		col := t.cols[k]
		if n := len(groups); col.group != "" && n > 0 && groups[n-1].Name == col.group {
			groups[n-1].Span++
		} else {
			groups = append(groups, headGroup{Name: col.group, Span: 1, Single: col.group == ""})
		}
		if col.group == "" {
			groups[len(groups)-1].Name = htmlHead(col)
		} else {
			heads = append(heads, htmlHead(col))
		}
	}
	for j, tb := range t.blocks {
		b := tb.block
		bv := &blockView{ID: fmt.Sprintf("%s-b%d", sec.ID, j+1), Title: b.Title(), Groups: groups, Heads: heads, Span: len(figures)}
		stats := map[*Cell]CellStats{}
		for k, c := range tb.cells {
			stats[c] = tb.stats[k]
		}
		bv.Charts = blockCharts(bv.ID, s, b, stats, colors, t.unit)
		prev := ""
		for k, c := range tb.cells {
			st := tb.stats[k]
			tr := tableRow{Rung: c.Rung, Path: c.Path, Color: colors[c.Path], Baseline: c.Path == s.Baseline(),
				FirstOfRung: c.Rung != prev}
			prev = c.Rung
			switch {
			case !st.OK:
				tr.Failed = "failed: " + orText(oneLine(st.Failed, 200), "no result")
			case st.Unmeasured:
				tr.Failed = "interrupted before it measured anything"
			default:
				for _, f := range figures {
					v := micro(tb.rows[k][f])
					switch key := t.cols[f].key; {
					case key == "rate" && !t.unit.stream:
						v = thousands(st.RPS)
					case key == "msgs" && st.Messages != nil:
						v = thousands(st.Messages.Count)
					case key == "msgs/s" && st.Messages != nil:
						v = thousands(st.Messages.PerSec)
					}
					tr.Cells = append(tr.Cells, v)
				}
			}
			for _, f := range st.Flags {
				tr.Flags = append(tr.Flags, flagView{string(f), FlagMeaning(string(f))})
			}
			bv.Rows = append(bv.Rows, tr)
		}
		bv.OverTime, bv.OverTimeOpen = stepsOverTime(bv.ID, tb.cells, colors)
		bv.Placement = placementLines(tb.cells)
		sec.Blocks = append(sec.Blocks, bv)
	}
	return sec
}

// micro writes microseconds as µs (the tables keep wrk's "us").
func micro(s string) string {
	if strings.HasSuffix(s, "us") {
		return strings.TrimSuffix(s, "us") + "µs"
	}
	return s
}

func envFor(s *Sweep) envView {
	e := s.Env()
	ev := envView{Name: s.Name}
	add := func(k, v string) {
		if v != "" {
			ev.Facts = append(ev.Facts, fact{k, v, ""})
		}
	}
	add("Host", hostnames(e.Hostname))
	if e.NumCPU > 0 {
		add("CPU", fmt.Sprintf("%d × %s (GOMAXPROCS %d)", e.NumCPU, orDash(e.CPUModel), e.GOMAXPROCS))
	}
	add("OS", strings.TrimSpace(e.OS+"/"+e.Arch))
	add("Kernel", e.Kernel)
	add("Go", e.GoVersion)
	add("loadgen", e.Version)
	if s.Manifest != nil {
		add("Created", s.Manifest.Created.UTC().Format(time.RFC3339))
		sp := s.spec()
		add("Protocol", sp.Protocol)
		add("Endpoint", sp.Endpoint)
		add("Ladder", strings.Join(sp.Ladder, " "))
		if sp.Duration != "" {
			d := sp.Duration + " per step"
			if sp.Warmup != "" && sp.Warmup != "0s" {
				d += ", warm-up " + sp.Warmup
			}
			if sp.Repeats > 0 {
				d += ", " + plural(sp.Repeats, "repeat")
			}
			add("Duration", d)
		}
		if sp.Timeout != "" && sp.Timeout != "0s" {
			add("Timeout", sp.Timeout)
		}
		for _, p := range sp.Paths {
			v := p.URL
			if p.Baseline {
				v += " (baseline)"
			}
			if len(p.Watch) > 0 && string(p.Watch) != "null" {
				v += " · watch " + compactJSON(p.Watch)
			}
			ev.Paths = append(ev.Paths, fact{p.Name, v, ""})
		}
		if len(sp.Target) > 0 && string(sp.Target) != "null" {
			ev.Paths = append(ev.Paths, fact{"target", "watch " + compactJSON(sp.Target), ""})
		}
	} else if len(s.Steps) > 0 && s.Steps[0].Run != nil {
		g := s.Steps[0].Run.Generator
		add("Generator", fmt.Sprintf("%.2f CPU-s, %.0f%% of %.0f CPUs, peak RSS %s", g.CPUSeconds, 100*g.Utilization, g.CPUs, fmtMiB(g.PeakRSS)))
	}
	return ev
}

func compactJSON(b []byte) string {
	s := strings.NewReplacer("\n", "", " ", "", `"`, "").Replace(string(b))
	return s
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// thousands prints a count or rate rounded, with thin thousands separators.
func thousands(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	neg := v < 0
	n := int64(math.Round(math.Abs(v)))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if neg {
		return "−" + b.String()
	}
	return b.String()
}

// glanceNote is the caption of the cards of based sweeps with a baseline
// and unbased ones whose paths have none.
func glanceNote(based, unbased int) string {
	const medians = "Medians over the ladder steps and payloads of each path"
	const added = "“added” is the path’s latency minus the baseline’s at the same step"
	const name = "name the direct one baseline (--path baseline=URL, or baseline: true in the sweep file)"
	switch {
	case unbased == 0:
		return medians + "; " + added + "."
	case based == 0:
		return medians + "; no path is the baseline, so no latency or cost is “added”: " + name + "."
	default:
		return medians + "; " + added + "; the sweeps with no path as baseline have none: " + name + "."
	}
}
