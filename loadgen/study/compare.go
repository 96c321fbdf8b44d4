package study

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"loadgen/results/compare"
)

// Row is one line of a study's table: the published figure and ours, each
// also as a ratio to the study's own baseline row.
type Row struct {
	Key, Note              string
	Published              float64
	Measured               Figure
	HasPub, HasMeas        bool
	PubRatio, MeasRatio    float64
	HasPubRatio, HasMRatio bool
	// OwnRatio is the measured figure over its own run's baseline path
	// (OwnBase: the row's mode with the baseline's path, vxlan.node-node),
	// where that is another figure than the baseline row's: runs made
	// minutes apart (one CNI each, on a cluster) drift, and each run's own
	// node ↔ node drifts with it.
	OwnRatio    float64
	HasOwnRatio bool
	OwnBase     string
	// Source is the key of the row's source when it is not its table's.
	Source     string
	SamePathAs string
}

// ownBase is the measure of a row's own run's baseline: the row's mode
// (the measure's part before its first '.') with the baseline measure's
// path; "" when either is not MODE.PATH, or for the baseline's own mode.
func ownBase(row, base string) string {
	rm, _, ok1 := strings.Cut(row, ".")
	bm, bp, ok2 := strings.Cut(base, ".")
	if !ok1 || !ok2 || rm == bm || strings.Contains(row, "|") || strings.Contains(base, "|") {
		return ""
	}
	return rm + "." + bp
}

// HasOwnRatios tells whether a row has a ratio to its own run's baseline
// path (Row.OwnRatio): the table then shows that column too.
func (t Table) HasOwnRatios() bool {
	for _, r := range t.Rows {
		if r.HasOwnRatio {
			return true
		}
	}
	return false
}

// Outcome is what an ordering comes to on our figures.
type Outcome string

const (
	// NotMeasured means we lack one of the two figures.
	NotMeasured Outcome = "not measured here"
	// NotDistinguishable means the two rows are one datapath on this machine
	// (marked in the data: same_path_as), so no figures can tell them apart.
	NotDistinguishable Outcome = "not distinguishable here"
	// NoiseUnknown means one repeat of either figure, so its noise cannot be
	// told from the gap.
	NoiseUnknown Outcome = "noise cannot be told"
	// Holds means every repeat of the lower row is below every repeat of the
	// higher (their min–max ranges are apart: the gap between the medians
	// exceeds the spread of the two toward each other). For a pair the study
	// found about the same: the ranges overlap.
	Holds Outcome = "holds"
	// Reversed means every repeat of the lower row is above every repeat of
	// the higher.
	Reversed Outcome = "reversed"
	// WithinNoise means the ranges overlap: the repeats cannot order the
	// two.
	WithinNoise Outcome = "within noise"
	// Differs means, for a pair the study found about the same, the ranges
	// are apart.
	Differs Outcome = "differs"
	// Contended means the runs behind the two rows measured contention for
	// CPU (a saturated machine, M, or generator, G) that can explain what
	// the figures show: had contention not stretched them, the ranges could
	// lie the other way (or, for a pair found about the same, apart). Not
	// decidable: exit status 98 unless --allow-contended.
	Contended Outcome = "not decidable (contended)"
)

// contended tells whether contention c can explain the outcome o of rows
// a and b of a table of kind k: each row's range is widened by its own
// runs' contention beyond the other's (widen), and the ordering stands
// only when the widened ranges still lie as the figures do.
func contended(k Kind, a, b Figure, o Outcome, c compare.Contention) bool {
	if c.Flags == "" {
		return false
	}
	alo, ahi := widen(k, a, c.OnA)
	blo, bhi := widen(k, b, c.OnB)
	switch o {
	case Holds, Reversed, Differs:
		if a.Max < b.Min || b.Max < a.Min { // apart: could they meet?
			return ahi >= blo && bhi >= alo
		}
		// about the same, holding: could a gap hide in the ranges?
		return alo < a.Min || ahi > a.Max || blo < b.Min || bhi > b.Max
	}
	return false
}

// widen is the range a figure could have had without contention that
// stretches what it is made of by f: a rate is lowered (the truth up to
// f higher), a latency or a CPU per request raised (up to f lower); a
// ratio of two cells moves either way by f, a difference by (f − 1) ×
// the larger of its two figures. Memory is not contention's, nor is a
// baseline's own ratio (1) or difference (0).
func widen(k Kind, x Figure, f float64) (lo, hi float64) {
	if len(x.Runs) == 0 {
		return x.Min, x.Max
	}
	switch k {
	case Gbps, Msgs, RPS, TPS:
		return x.Min, x.Max * f
	case RRus, CRRs, ProxyCPU:
		return x.Min / f, x.Max
	case ProxyMem, ProxyMemMax:
		return x.Min, x.Max
	case AddedP50:
		d := (f - 1) * x.Raw
		return x.Min - d, x.Max + d
	}
	return x.Min / f, x.Max * f
}

// Judge decides an ordering (a below b; about: a about the same as b) on
// two measured figures by their repeats' spread against the gap.
func Judge(a, b Figure, about bool) Outcome {
	switch {
	case a.N == 0 || b.N == 0:
		return NotMeasured
	case a.N < 2 || b.N < 2:
		return NoiseUnknown
	}
	apart := a.Max < b.Min || b.Max < a.Min
	switch {
	case about && apart:
		return Differs
	case about:
		return Holds
	case a.Max < b.Min:
		return Holds
	case b.Max < a.Min:
		return Reversed
	}
	return WithinNoise
}

// Verdict is one of the study's orderings checked against our figures.
type Verdict struct {
	Lower, Higher string
	// About tells whether the study found the two about the same, not one
	// below.
	About   bool
	Outcome Outcome
	// PubRatio and MeasRatio are Lower over Higher, published and ours;
	// HasPubRatio is false for a study that published the ordering alone.
	PubRatio, MeasRatio float64
	HasPubRatio         bool
	// LowerFig and HigherFig are the two measured figures.
	LowerFig, HigherFig Figure
	// Label is what the table's figures are: "published", or "unsourced"
	// for a table whose source cannot be named.
	Label string
	// Contention is what the two rows' runs measured of contention for
	// CPU; the Outcome is Contended when it explains the figures.
	Contention compare.Contention
}

// Table is a study's table filled with what we measured.
type Table struct {
	PublishedTable
	Rows     []Row
	Verdicts []Verdict
	// Sources are where its figures come from (none: unsourced).
	Sources []Source
}

// Label is "published", or "unsourced" for a table whose source cannot be
// named: no output calls a figure published without its source.
func (t Table) Label() string {
	if t.Unsourced != "" || len(t.Sources) == 0 {
		return "unsourced"
	}
	return "published"
}

// Compare fills a study's published table with what m measured. For the
// sizing kinds, worker counts we measured that the study has no row for
// are added as rows of their own.
func Compare(p Published, t PublishedTable, m *Measured) Table {
	out := Table{PublishedTable: t, Sources: p.TableSources(t)}
	idx := map[string]int{}
	for _, r := range t.Rows {
		row := Row{Key: r.Key, Note: r.Note, Source: r.Source, SamePathAs: r.SamePathAs}
		if r.Value != nil {
			row.Published, row.HasPub = *r.Value, true
		}
		row.Measured, row.HasMeas = m.Value(t, r.Measure)
		idx[r.Key] = len(out.Rows)
		out.Rows = append(out.Rows, row)
	}
	if t.Kind == RPS || t.Kind == TPS {
		for _, w := range m.Workers() {
			k := strconv.Itoa(w)
			if _, ok := idx[k]; ok {
				continue
			}
			row := Row{Key: k}
			row.Measured, row.HasMeas = m.Value(t, k)
			idx[k] = len(out.Rows)
			out.Rows = append(out.Rows, row)
		}
		sortRowsNumerically(out.Rows)
		for i, r := range out.Rows {
			idx[r.Key] = i
		}
	}
	base := out.Rows[idx[t.Baseline]]
	baseMeasure := ""
	for _, r := range t.Rows {
		if r.Key == t.Baseline {
			baseMeasure = r.Measure
		}
	}
	measures := map[string]string{}
	for _, r := range t.Rows {
		measures[r.Key] = r.Measure
	}
	for i := range out.Rows {
		r := &out.Rows[i]
		if r.HasPub && base.HasPub {
			r.PubRatio, r.HasPubRatio = r.Published/base.Published, true
		}
		if r.HasMeas && base.HasMeas && base.Measured.Value > 0 {
			r.MeasRatio, r.HasMRatio = r.Measured.Value/base.Measured.Value, true
		}
		if own := ownBase(measures[r.Key], baseMeasure); own != "" && r.HasMeas {
			if b, ok := m.Value(t, own); ok && b.Value > 0 {
				r.OwnRatio, r.HasOwnRatio, r.OwnBase = r.Measured.Value/b.Value, true, own
			}
		}
	}
	// Beside a row with its own run's ratio, the rows measured in the
	// baseline's own run have theirs too: the measured ratio.
	if out.HasOwnRatios() {
		for i := range out.Rows {
			r := &out.Rows[i]
			if !r.HasOwnRatio && r.HasMRatio && ownBase(measures[r.Key], baseMeasure) == "" && measures[r.Key] != "" {
				r.OwnRatio, r.HasOwnRatio, r.OwnBase = r.MeasRatio, true, baseMeasure
			}
		}
	}
	judge := func(o [2]string, about bool) {
		lo, hi := out.Rows[idx[o[0]]], out.Rows[idx[o[1]]]
		v := Verdict{Lower: o[0], Higher: o[1], About: about, Label: out.Label()}
		if lo.HasPub && hi.HasPub {
			v.PubRatio, v.HasPubRatio = lo.Published/hi.Published, true
		}
		if lo.HasMeas && hi.HasMeas {
			v.LowerFig, v.HigherFig = lo.Measured, hi.Measured
			if hi.Measured.Value != 0 {
				v.MeasRatio = lo.Measured.Value / hi.Measured.Value
			}
		}
		switch {
		case lo.SamePathAs == hi.Key || hi.SamePathAs == lo.Key:
			v.Outcome = NotDistinguishable
		case !lo.HasMeas || !hi.HasMeas:
			v.Outcome = NotMeasured
		default:
			v.Outcome = Judge(lo.Measured, hi.Measured, about)
			v.Contention = compare.ContentionBetween(o[0], lo.Measured.Runs, o[1], hi.Measured.Runs)
			if contended(t.Kind, lo.Measured, hi.Measured, v.Outcome, v.Contention) {
				v.Outcome = Contended
			}
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	for _, o := range t.Orderings {
		judge(o, false)
	}
	for _, o := range t.About {
		judge(o, true)
	}
	return out
}

func sortRowsNumerically(rows []Row) {
	n := func(r Row) int { v, _ := strconv.Atoi(r.Key); return v }
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && n(rows[j]) < n(rows[j-1]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// Caveat is printed under every study's table.
const Caveat = "absolute figures from the study's testbed (10 GbE and more, bare metal, a cloud's nodes) are not comparable to one kernel's namespaces; the ratios to the baseline row and the orderings are. An ordering holds or is reversed when every repeat of one row is on its side of every repeat of the other; within noise when their ranges overlap; not decidable (contended) when the runs' machine or generator was saturated (M, G) and contention for CPU can explain the figures"

// SourceLines are the table's source lines: "source: …" for its own, then
// "source [key]: …" for its rows' others; "unsourced: why" for a table
// whose source cannot be named.
func (t Table) SourceLines() []string {
	if t.Label() == "unsourced" {
		why := t.Unsourced
		if why == "" {
			why = "its source is not recorded"
		}
		return []string{"unsourced: " + why}
	}
	var out []string
	for i, s := range t.Sources {
		if i == 0 && s.Key == t.Source {
			out = append(out, "source: "+s.Line())
			continue
		}
		out = append(out, "source ["+s.Key+"]: "+s.Line())
	}
	return out
}

// Write prints the table: its source, then published, measured (with the
// range over repeats), both as a ratio to the baseline row, then what each
// of the study's orderings comes to here.
func (t Table) Write(w io.Writer) error {
	label := t.Label()
	fmt.Fprintf(w, "%s (%s; ratios to %s)\n", t.Metric, t.Unit, t.Baseline)
	for _, l := range t.SourceLines() {
		fmt.Fprintln(w, l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	own := t.HasOwnRatios()
	ownHead := ""
	if own {
		ownHead = "its run's " + t.Baseline + "\t"
	}
	fmt.Fprintf(tw, "row\t%s\tmeasured\trepeats\t%s ratio\tmeasured ratio\t%s\n", label, label, ownHead)
	for _, r := range t.Rows {
		ownCell := ""
		if own {
			ownCell = ratio(r.OwnRatio, r.HasOwnRatio) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", r.Key, figure(r.Published, r.HasPub), figure(r.Measured.Value, r.HasMeas),
			spread(r.Measured, r.HasMeas), ratio(r.PubRatio, r.HasPubRatio), ratio(r.MeasRatio, r.HasMRatio), ownCell, note(r.rowNote(t.Source)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range t.Verdicts {
		fmt.Fprintf(w, "%s\n", v.Line(t.Metric))
	}
	return nil
}

// rowNote is the row's note, marked with its source when it is not the
// table's.
func (r Row) rowNote(tableSource string) string {
	n := strings.TrimSpace(r.Note)
	if r.Source != "" && r.Source != tableSource && r.HasPub {
		n = strings.TrimSpace("[" + r.Source + "] " + n)
	}
	return n
}

// Ordering names the ordering on a table's metric: "vxlan below host-gw
// on …", or "a about the same as b on …" for a pair the study found about
// the same.
func (v Verdict) Ordering(metric string) string {
	rel := " below "
	if v.About {
		rel = " about the same as "
	}
	return v.Lower + rel + v.Higher + " on " + metric
}

// Contended names the table's orderings not decidable for contention
// (Verdict.Ordering), in the table's order; none for a quiet machine.
func (t Table) Contended() []string {
	var out []string
	for _, v := range t.Verdicts {
		if v.Outcome == Contended {
			out = append(out, v.Ordering(t.Metric))
		}
	}
	return out
}

// Line says what the ordering comes to: "vxlan below host-gw on …: holds
// (0.83 here, 0.29 published; 3 repeats, their ranges apart)".
func (v Verdict) Line(metric string) string {
	what := v.Ordering(metric)
	label := v.Label
	if label == "" {
		label = "published"
	}
	pub := fmt.Sprintf("%.2f %s", v.PubRatio, label)
	if !v.HasPubRatio {
		pub = label + " as an ordering"
		if v.About {
			pub = label + " as about the same"
		}
	}
	here := fmt.Sprintf("%.2f here", v.MeasRatio)
	repeats := fmt.Sprintf("%d repeats", min(v.LowerFig.N, v.HigherFig.N))
	switch v.Outcome {
	case NotMeasured, "":
		return fmt.Sprintf("%s: not measured here (%s)", what, pub)
	case NotDistinguishable:
		return fmt.Sprintf("%s: not distinguishable here: one datapath on this machine (%s)", what, pub)
	case NoiseUnknown:
		return fmt.Sprintf("%s: noise cannot be told, one repeat (%s, %s; --repeats 3 to judge)", what, here, pub)
	case WithinNoise:
		return fmt.Sprintf("%s: within noise (%s, %s; %s, their ranges overlap)", what, here, pub, repeats)
	case Differs:
		lower := v.Lower
		if v.HigherFig.Value < v.LowerFig.Value {
			lower = v.Higher
		}
		return fmt.Sprintf("%s: differs, %s lower beyond noise (%s, %s; %s, their ranges apart)", what, lower, here, pub, repeats)
	case Contended:
		return fmt.Sprintf("%s: not decidable (contended): %s saturated, contention can stretch a figure %s, enough to explain what the figures show (%s, %s; %s; --allow-contended: exit 0)",
			what, v.Contention.Flags, v.Contention.Why, here, pub, repeats)
	case Holds:
		if v.About {
			return fmt.Sprintf("%s: holds (%s, %s; %s, their ranges overlap)", what, here, pub, repeats)
		}
		return fmt.Sprintf("%s: holds (%s, %s; %s, their ranges apart)", what, here, pub, repeats)
	}
	return fmt.Sprintf("%s: %s (%s, %s; %s, their ranges apart)", what, v.Outcome, here, pub, repeats)
}

func figure(v float64, ok bool) string {
	switch {
	case !ok:
		return "–"
	case v == 0:
		return "0"
	case abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case abs(v) < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// spread is a measured figure's range over repeats: "14.9–15.1 ×3", "×1".
func spread(f Figure, ok bool) string {
	switch {
	case !ok:
		return "–"
	case f.N < 2:
		return fmt.Sprintf("×%d", f.N)
	}
	return fmt.Sprintf("%s–%s ×%d", figure(f.Min, true), figure(f.Max, true), f.N)
}

func ratio(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.TrimSpace(s)
}
