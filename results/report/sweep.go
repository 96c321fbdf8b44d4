package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"loadgen/results"
)

// Cell is the steps of a sweep that share payload, rate, rung and path:
// the repeats of one measurement.
type Cell struct {
	Payload int
	Rate    float64
	Rung    string
	Conns   int
	Path    string
	Steps   []*results.Step
}

// Cells groups steps by payload, rate, rung and path, in the order a table
// reads them: payload, rate, connections, then paths as first seen.
func Cells(steps []*results.Step) []*Cell {
	byKey := map[string]*Cell{}
	pathOrder := map[string]int{}
	var cells []*Cell
	for _, st := range steps {
		if _, ok := pathOrder[st.Path]; !ok {
			pathOrder[st.Path] = len(pathOrder)
		}
		k := fmt.Sprintf("%d|%g|%s|%s", st.Payload, st.Rate, st.Rung, st.Path)
		c := byKey[k]
		if c == nil {
			c = &Cell{Payload: st.Payload, Rate: st.Rate, Rung: st.Rung, Conns: st.Connections, Path: st.Path}
			byKey[k] = c
			cells = append(cells, c)
		}
		c.Steps = append(c.Steps, st)
	}
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		switch {
		case a.Payload != b.Payload:
			return a.Payload < b.Payload
		case a.Rate != b.Rate:
			return a.Rate < b.Rate
		case a.Conns != b.Conns:
			return a.Conns < b.Conns
		}
		return pathOrder[a.Path] < pathOrder[b.Path]
	})
	return cells
}

// Median of a metric over a cell's runs (failed steps have none).
func (c *Cell) Median(f func(*results.Step) float64) (float64, bool) {
	return c.medianWhere(nil, f)
}

// values are f of the runs that keep (nil: all), one per repeat.
func (c *Cell) values(keep func(*results.Step) bool, f func(*results.Step) float64) []float64 {
	var xs []float64
	for _, st := range c.Steps {
		if st.Run != nil && (keep == nil || keep(st)) {
			xs = append(xs, f(st))
		}
	}
	return xs
}

// medianWhere is the median over the runs that keep (nil: all).
func (c *Cell) medianWhere(keep func(*results.Step) bool, f func(*results.Step) float64) (float64, bool) {
	xs := c.values(keep, f)
	if len(xs) == 0 {
		return 0, false
	}
	sort.Float64s(xs)
	if n := len(xs); n%2 == 1 {
		return xs[n/2], true
	} else {
		return (xs[n/2-1] + xs[n/2]) / 2, true
	}
}

// Watched is the median cost of the processes of one role ("proxy",
// "target") over a cell's runs: per run, f summed over that role's
// watches (every proxy of the path once), over the runs that measured
// each of them.
func (c *Cell) Watched(role string, f func(results.ProcessCost) float64) (float64, bool) {
	return c.watchedWhere(func(w results.ProcessCost) bool { return w.Role == role }, f)
}

// watchedWhere is the median over a cell's runs of f summed over the
// watches match selects, of the runs where one was measured and none
// failed to be; a side without a proxy (NoProxy) has no figure.
func (c *Cell) watchedWhere(match func(results.ProcessCost) bool, f func(results.ProcessCost) float64) (float64, bool) {
	measured := func(st *results.Step) bool {
		n := 0
		for _, w := range st.Watched {
			switch {
			case !match(w) || w.NoProxy != "":
			case w.Unmeasured != "":
				return false
			default:
				n++
			}
		}
		return n > 0
	}
	return c.medianWhere(measured, func(st *results.Step) float64 {
		var v float64
		for _, w := range st.Watched {
			if match(w) && w.NoProxy == "" {
				v += f(w)
			}
		}
		return v
	})
}

// noProxy tells whether every run of the cell that watched the side had
// no proxy there (--mode serveronly: the client's side).
func (c *Cell) noProxy(side string) bool {
	none := false
	for _, st := range c.Steps {
		for _, w := range st.Watched {
			if w.Side != side {
				continue
			}
			if w.NoProxy == "" {
				return false
			}
			none = true
		}
	}
	return none
}

// costNote is why a watched process of the cell has no figure (its
// source measures over windows longer than the step), or "".
func (c *Cell) costNote() string {
	for _, st := range c.Steps {
		for _, w := range st.Watched {
			if w.Unmeasured != "" {
				return fmt.Sprintf("%s's CPU and memory %s", w.Name, w.Unmeasured)
			}
		}
	}
	return ""
}

// Flags marks what makes a cell's figures doubtful: F failed (a repeat
// has no result, or no request of it succeeded: Step.Failure), I
// interrupted, G generator saturated, M machine saturated.
func (c *Cell) Flags() string {
	var f []string
	add := func(s string) {
		for _, x := range f {
			if x == s {
				return
			}
		}
		f = append(f, s)
	}
	for _, st := range c.Steps {
		if st.Interrupted && st.Run == nil { // Ctrl-C before its load began
			add("I")
			continue
		}
		if st.Failure() != "" {
			add("F")
		}
		switch {
		case st.Run == nil:
			continue
		case st.Run.Interrupted:
			add("I")
		}
		if st.Run.Generator.Saturated {
			add("G")
		}
		if MachineSaturated(st.Run) {
			add("M")
		}
	}
	return strings.Join(f, "")
}

func ms(d float64) string {
	if d == 0 {
		return "-"
	}
	return Latency(results.Duration(time.Duration(d)))
}

// TableOptions fit a text table to a terminal.
type TableOptions struct {
	Width int  // columns to fit in; 0 is DefaultWidth
	Wide  bool // every column, whatever the width
	// Hops is how many targets each request crossed (Sweep.Hops): past
	// one, the table has the added figures per hop too.
	Hops int
}

// DefaultWidth is the width tables fit when the output is not a terminal.
const DefaultWidth = 120

// table is a sweep's table, every column of it: a block per payload (and
// rate), a row per ladder step and path.
type table struct {
	unit   unit
	cols   []column
	blocks []tableBlock
	notes  []string // why cells have no figures
	levels []string // the confidences of the added figures' intervals ("90%")
}

type tableBlock struct {
	block *Block
	title string
	cells []*Cell
	stats []CellStats
	rows  [][]string // a text per column
}

func newTable(baseline string, steps []*results.Step, hops int) *table {
	cells := Cells(steps)
	t := &table{}
	for _, c := range cells {
		if p := c.protocol(); p != "" {
			t.unit = unitOf(p)
			break
		}
	}
	if t.unit.rate == "" {
		t.unit = unitOf("")
	}
	t.cols = sweepColumns(t.unit, hops)
	baseOf := BaselineOf(cells, baseline)
	type why struct{ path, reason string }
	var order []why
	where := map[why][]string{}
	for _, b := range Blocks(cells) {
		tb := tableBlock{block: b, title: b.Title()}
		for _, c := range b.Cells {
			st := c.Stats(baseOf(c))
			row := make([]string, len(t.cols))
			for i, col := range t.cols {
				row[i] = col.text(c, st)
			}
			tb.cells, tb.stats, tb.rows = append(tb.cells, c), append(tb.stats, st), append(tb.rows, row)
			if n := c.costNote(); n != "" && st.OK {
				k := why{c.Path, n}
				if _, ok := where[k]; !ok {
					order = append(order, k)
				}
				where[k] = append(where[k], c.Rung+" "+sizeLabel(c.Payload))
			}
			var k why
			switch {
			case !st.OK:
				k = why{c.Path, "failed: " + orText(oneLine(st.Failed, 1<<10), "no result")}
			case st.Unmeasured:
				k = why{c.Path, "interrupted before it measured anything (it runs again on resume)"}
			default:
				continue
			}
			if _, ok := where[k]; !ok {
				order = append(order, k)
			}
			where[k] = append(where[k], c.Rung+" "+sizeLabel(c.Payload))
		}
		t.blocks = append(t.blocks, tb)
		for _, l := range intervalLevels(tb.stats) {
			if !contains(t.levels, l) {
				t.levels = append(t.levels, l)
			}
		}
	}
	if n := noBaselineNote(baseline, cells); n != "" {
		t.notes = append(t.notes, n)
	}
	for _, k := range order {
		t.notes = append(t.notes, fmt.Sprintf("%s at %s: %s", k.path, strings.Join(where[k], ", "), k.reason))
	}
	return t
}

// noBaselineNote says how to name a baseline when cells hold several
// paths and none is the baseline (so nothing is added over one), or "".
// An ingress sizing (every step at a worker count) has none to name.
func noBaselineNote(baseline string, cells []*Cell) string {
	paths := cellPaths(cells)
	if baseline != "" || len(paths) < 2 || allWorkers(cells) {
		return ""
	}
	return fmt.Sprintf("no latency or cost added over a baseline (+pNN, +cpu): no path is the baseline; "+
		"name the direct one baseline (--path baseline=URL, or baseline: true in the sweep file), e.g. %s, and the others are compared with it", paths[0])
}

// cellPaths are the paths of cells, in order.
func cellPaths(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		if !contains(out, c.Path) {
			out = append(out, c.Path)
		}
	}
	return out
}

// choose picks the columns to show: never one that is empty in every row;
// with wide all the others; else the first columns, then the others in
// columnPriority's order while the table fits width (0: no others). It
// returns the indexes of the columns shown, in order, and the heads of
// those left out.
func (t *table) choose(width int, wide bool) (shown []int, hidden []string) {
	widths := t.widths()
	use := make([]bool, len(t.cols))
	total := -2
	for i, col := range t.cols {
		if widths[i] >= 0 && (col.first || wide) {
			use[i] = true
			total += widths[i] + 2
		}
	}
	for _, key := range columnPriority {
		for i, col := range t.cols {
			if col.key == key && widths[i] >= 0 && !use[i] && width > 0 && total+widths[i]+2 <= width {
				use[i] = true
				total += widths[i] + 2
			}
		}
	}
	for i, col := range t.cols {
		switch {
		case use[i]:
			shown = append(shown, i)
		case widths[i] >= 0:
			hidden = append(hidden, col.head)
		}
	}
	return shown, hidden
}

// keys are the keys of the columns at these indexes.
func (t *table) keys(idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, t.cols[i].key)
	}
	return out
}

// widths are each column's width in runes, -1 for a column empty in every row.
func (t *table) widths() []int {
	w := make([]int, len(t.cols))
	for i := range t.cols {
		w[i] = -1
		for _, b := range t.blocks {
			for _, r := range b.rows {
				if n := utf8.RuneCountInString(r[i]); r[i] != "" && n > w[i] {
					w[i] = n
				}
			}
		}
		if w[i] >= 0 {
			w[i] = max(w[i], utf8.RuneCountInString(t.cols[i].head))
		}
	}
	return w
}

// SweepTable writes the comparison table of a sweep: one block per payload
// (and rate), a row per ladder step and path, medians over repeats, in the
// units of the sweep's protocol. It fits opt.Width: the columns a reader
// needs first, then others while they fit (all of them with opt.Wide).
// Why a cell has no figures is a note under the table.
func SweepTable(w io.Writer, baseline string, steps []*results.Step, opt TableOptions) error {
	width := opt.Width
	if width <= 0 {
		width = DefaultWidth
	}
	t := newTable(baseline, steps, opt.Hops)
	shown, hidden := t.choose(width, opt.Wide)
	widths := t.widths()
	var b strings.Builder
	line := func(cells func(i int) string) {
		var cur strings.Builder
		for k, i := range shown {
			s := cells(i)
			pad := strings.Repeat(" ", max(0, widths[i]-utf8.RuneCountInString(s)))
			if k > 0 {
				cur.WriteString("  ")
			}
			if t.cols[i].left {
				cur.WriteString(s + pad)
			} else {
				cur.WriteString(pad + s)
			}
		}
		b.WriteString(strings.TrimRight(cur.String(), " ") + "\n")
	}
	for n, blk := range t.blocks {
		if n > 0 {
			b.WriteString("\n")
		}
		b.WriteString(blk.title + "\n")
		line(func(i int) string { return t.cols[i].head })
		for _, r := range blk.rows {
			line(func(i int) string { return r[i] })
		}
	}
	b.WriteString("\n")
	notes := min(width, TextWidth) // the notes under the table keep to loadgen's text width
	for _, n := range t.notes {
		b.WriteString(Wrap(n, notes, "  "))
	}
	if len(hidden) > 0 {
		b.WriteString(Wrap(fmt.Sprintf("not shown to fit %d columns: %s (--wide shows them; the CSV and HTML reports have every figure)", width, strings.Join(hidden, ", ")), notes, "  "))
	}
	b.WriteString(Wrap(legend(t.unit, baseline, t.keys(shown), t.levels, opt.Hops), notes, "  "))
	_, err := io.WriteString(w, b.String())
	return err
}

// Wrap breaks s into lines of at most width runes at spaces, the lines
// after the first indented, and ends it with a newline: loadgen's own
// text (help, warnings, notes under tables) keeps to its width so.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		l := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+l > width:
			b.WriteString("\n" + indent)
			n = utf8.RuneCountInString(indent)
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += l
	}
	return b.String() + "\n"
}

func orText(s, instead string) string {
	if s == "" {
		return instead
	}
	return s
}

func delta(d float64) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d == 0 {
		return "0"
	}
	return sign + ms(d)
}

func orNone(s string) string {
	if s == "" {
		return "the baseline (none marked)"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// allWorkers reports whether every step of cells set a proxy's worker
// count: an ingress sizing, whose paths are the same proxy at each count
// and have no direct baseline to be compared with.
func allWorkers(cells []*Cell) bool {
	for _, c := range cells {
		for _, st := range c.Steps {
			if st.Workers == 0 {
				return false
			}
		}
	}
	return len(cells) > 0
}
