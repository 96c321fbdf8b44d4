package study

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"loadgen/results/report"
)

// Row is one line of a study's table: the published figure and ours, each
// also as a ratio to the study's own baseline row.
type Row struct {
	Key, Note              string
	Published, Measured    float64
	HasPub, HasMeas        bool
	PubRatio, MeasRatio    float64
	HasPubRatio, HasMRatio bool
}

// Verdict is one of the study's orderings checked against our figures.
type Verdict struct {
	Lower, Higher string
	// Holds is whether our figures order the two rows as the study did;
	// Measured is false when we lack one of them.
	Holds, Measured bool
	// PubRatio and MeasRatio are Lower over Higher, published and ours.
	PubRatio, MeasRatio float64
}

// Table is a study's table filled with what we measured.
type Table struct {
	PublishedTable
	Rows     []Row
	Verdicts []Verdict
}

// Compare fills a published table with what m measured. For the sizing
// kinds, worker counts we measured that the study has no row for are added
// as rows of their own.
func Compare(t PublishedTable, m *Measured) Table {
	out := Table{PublishedTable: t}
	idx := map[string]int{}
	for _, r := range t.Rows {
		row := Row{Key: r.Key, Note: r.Note, Published: r.Value, HasPub: true}
		row.Measured, row.HasMeas = m.Value(t.Kind, r.Measure)
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
			row.Measured, row.HasMeas = m.Value(t.Kind, k)
			idx[k] = len(out.Rows)
			out.Rows = append(out.Rows, row)
		}
		sortRowsNumerically(out.Rows)
		for i, r := range out.Rows {
			idx[r.Key] = i
		}
	}
	base := out.Rows[idx[t.Baseline]]
	for i := range out.Rows {
		r := &out.Rows[i]
		if r.HasPub && base.HasPub {
			r.PubRatio, r.HasPubRatio = r.Published/base.Published, true
		}
		if r.HasMeas && base.HasMeas && base.Measured > 0 {
			r.MeasRatio, r.HasMRatio = r.Measured/base.Measured, true
		}
	}
	for _, o := range t.Orderings {
		lo, hi := out.Rows[idx[o[0]]], out.Rows[idx[o[1]]]
		v := Verdict{Lower: o[0], Higher: o[1], PubRatio: lo.Published / hi.Published}
		if lo.HasMeas && hi.HasMeas && hi.Measured > 0 {
			v.Measured, v.Holds, v.MeasRatio = true, lo.Measured < hi.Measured, lo.Measured/hi.Measured
		}
		out.Verdicts = append(out.Verdicts, v)
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
const Caveat = "absolute figures from the study's testbed (10 GbE and more, bare metal) are not comparable to one kernel's namespaces; the ratios to the baseline row and the orderings are"

// Write prints the table: published, measured, both as a ratio to the
// baseline row, then whether each of the study's orderings holds here.
func (t Table) Write(w io.Writer) error {
	fmt.Fprintf(w, "%s (%s; ratios to %s)\n", t.Metric, t.Unit, t.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "row\tpublished\tmeasured\tpublished ratio\tmeasured ratio\t\n")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Key, figure(r.Published, r.HasPub), figure(r.Measured, r.HasMeas),
			ratio(r.PubRatio, r.HasPubRatio), ratio(r.MeasRatio, r.HasMRatio), note(r.Note))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range t.Verdicts {
		fmt.Fprintf(w, "%s\n", v.Line(t.Metric))
	}
	return nil
}

// Line says whether the ordering holds: "vxlan below host-gw on …: holds
// (0.83 vs 0.29 published)".
func (v Verdict) Line(metric string) string {
	what := fmt.Sprintf("%s below %s on %s", v.Lower, v.Higher, metric)
	if !v.Measured {
		return fmt.Sprintf("%s: not measured here (%.2f published)", what, v.PubRatio)
	}
	verdict := "holds"
	if !v.Holds {
		verdict = "does not hold"
	}
	return fmt.Sprintf("%s: %s (%.2f vs %.2f published)", what, verdict, v.MeasRatio, v.PubRatio)
}

func figure(v float64, ok bool) string {
	switch {
	case !ok:
		return "–"
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
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

// Report is the table for loadgen report's pages: every cell formatted as
// Write prints it.
func (t Table) Report(s Study, source string) report.Published {
	out := report.Published{Study: s.Name, Title: s.Title, Source: source, Metric: t.Metric, Unit: t.Unit,
		Baseline: t.Baseline, Caveat: Caveat}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, report.PublishedRow{Key: r.Key, Published: figure(r.Published, r.HasPub),
			Measured: figure(r.Measured, r.HasMeas), PubRatio: ratio(r.PubRatio, r.HasPubRatio),
			MeasRatio: ratio(r.MeasRatio, r.HasMRatio), Note: strings.TrimSpace(r.Note),
			PubRatioV: r.PubRatio, HasPubRatio: r.HasPubRatio, MeasRatioV: r.MeasRatio, HasMeasRatio: r.HasMRatio})
	}
	for _, v := range t.Verdicts {
		out.Verdicts = append(out.Verdicts, v.Line(t.Metric))
	}
	return out
}

// Marker is the file a study writes at the top of its results directory,
// so that loadgen report knows the directory for that study's.
const Marker = "study.json"

// MarkerFile is Marker's content.
type MarkerFile struct {
	Study string `json:"study"`
}

// Tables reads a study's results directory: its published tables filled
// with what the directory measured. ok is false when dir holds no study
// or the repository no published figures for it.
func Tables(dir string) (tables []report.Published, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, Marker))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	var mk MarkerFile
	if err := json.Unmarshal(b, &mk); err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, Marker), err)
	}
	s, err := Lookup(mk.Study)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, Marker), err)
	}
	pub, ok, err := s.Published()
	if err != nil || !ok {
		return nil, false, err
	}
	m, err := ReadMeasured(dir)
	if err != nil {
		return nil, false, err
	}
	for _, t := range pub.Tables {
		tables = append(tables, Compare(t, m).Report(s, pub.Source))
	}
	return tables, true, nil
}
