package study

// A study's tables for loadgen report: each table's cells as Write prints
// them, and a study's results directory (its marker) read back.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"loadgen/results/report"
	"loadgen/results/store"
)

// Report is the table for loadgen report's pages: every cell formatted as
// Write prints it. source is the line naming every source of the study's
// tables; with more than one, each table's metric names its own ([key]).
func (t Table) Report(s Study, source string, several bool) report.Published {
	metric := t.Metric
	if several && len(t.Sources) > 0 {
		var keys []string
		for _, src := range t.Sources {
			keys = append(keys, src.Key)
		}
		metric += " [" + strings.Join(keys, ", ") + "]"
	}
	out := report.Published{Study: s.Name, Title: s.Title, Source: source, Metric: metric, Unit: t.Unit,
		Baseline: t.Baseline, Caveat: Caveat, OwnRatios: t.HasOwnRatios()}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, report.PublishedRow{Key: r.Key, Published: figure(r.Published, r.HasPub),
			Measured: figure(r.Measured.Value, r.HasMeas), PubRatio: ratio(r.PubRatio, r.HasPubRatio),
			MeasRatio: ratio(r.MeasRatio, r.HasMRatio), OwnRatio: ratio(r.OwnRatio, r.HasOwnRatio), Note: r.rowNote(t.Source),
			PubRatioV: r.PubRatio, HasPubRatio: r.HasPubRatio, MeasRatioV: r.MeasRatio, HasMeasRatio: r.HasMRatio})
	}
	for _, v := range t.Verdicts {
		out.Verdicts = append(out.Verdicts, v.Line(t.Metric))
	}
	return out
}

// SourcesLine names every source of a study's sourced tables in one
// line: the one source's line, or "[key] line; [key] line" for several.
func SourcesLine(p Published) (line string, several bool) {
	var srcs []Source
	seen := map[string]bool{}
	for _, t := range p.Tables {
		for _, s := range p.TableSources(t) {
			if !seen[s.Key] {
				seen[s.Key] = true
				srcs = append(srcs, s)
			}
		}
	}
	if len(srcs) == 1 {
		return srcs[0].Line(), false
	}
	var parts []string
	for _, s := range srcs {
		parts = append(parts, "["+s.Key+"] "+s.Line())
	}
	return strings.Join(parts, "; "), len(srcs) > 1
}

// Marker is the file a study writes at the top of its results directory,
// so that loadgen report knows the directory for that study's.
const Marker = "study.json"

// MarkerFile is Marker's content.
type MarkerFile struct {
	Study string `json:"study"`
}

// WriteMarker names the study at the top of its results directory dir
// (Marker), for loadgen report: Tables and Read know it by it.
func WriteMarker(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(MarkerFile{Study: name})
	if err != nil {
		return err
	}
	return store.WriteFile(filepath.Join(dir, Marker), append(b, '\n'))
}

// Tables reads a study's results directory: its published tables filled
// with what the directory measured, each with its sources. A table whose
// source cannot be named is left out: a report's table is headed
// "published". ok is false when dir holds no study or the repository no
// sourced figures for it, and when dir is not a directory (a run's or a
// step's file, which `loadgen report` takes too).
func Tables(dir string) (tables []report.Published, ok bool, err error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, false, nil
	}
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
	sets, err := MeasuredSets(dir, pub)
	if err != nil {
		return nil, false, err
	}
	for _, set := range sets {
		ts := reportTables(s, pub, set.M)
		if len(sets) > 1 {
			for i := range ts {
				ts[i].Metric += ", measured " + set.Where
			}
		}
		tables = append(tables, ts...)
	}
	return tables, len(tables) > 0, nil
}

// reportTables are the study's sourced tables for loadgen report.
func reportTables(s Study, pub Published, m *Measured) []report.Published {
	line, several := SourcesLine(pub)
	var tables []report.Published
	for _, t := range pub.Tables {
		ct := Compare(pub, t, m)
		if ct.Label() == "unsourced" {
			continue
		}
		tables = append(tables, ct.Report(s, line, several))
	}
	return tables
}
