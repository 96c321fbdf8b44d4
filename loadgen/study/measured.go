package study

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"loadgen/results"
	"loadgen/results/report"
	"loadgen/results/store"
)

// Measured is what a study's run measured, by kind and by what a published
// row names (a lab path MODE.PATH, or a worker count).
type Measured struct {
	cni     map[string]report.CNIRow
	msgs    map[string]float64
	sizing  map[string]report.SizingRow
	workers []int // the worker counts measured, ascending
}

// ReadMeasured reads every sweep under dir (the study's results).
func ReadMeasured(dir string) (*Measured, error) {
	sweeps, err := ReadSweeps(dir)
	if err != nil {
		return nil, err
	}
	return measuredFrom(sweeps), nil
}

// ReadSweeps reads every sweep under dir, at any depth, in path order:
// a study's steps write theirs in directories of their own (lab/tcp-rr).
func ReadSweeps(dir string) ([]*report.Sweep, error) {
	var sweeps []*report.Sweep
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return fs.SkipAll // nothing measured yet
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, store.ManifestFile)); err != nil {
			return nil
		}
		man, steps, err := store.ReadSweep(path)
		if err != nil {
			return err
		}
		sweeps = append(sweeps, &report.Sweep{Name: path, Manifest: man, Steps: steps})
		return fs.SkipDir
	})
	return sweeps, err
}

func measuredFrom(sweeps []*report.Sweep) *Measured {
	m := &Measured{cni: map[string]report.CNIRow{}, msgs: map[string]float64{}, sizing: map[string]report.SizingRow{}}
	for _, r := range report.CNIMatrix(sweeps) {
		m.cni[r.Path] = r
	}
	for _, s := range sweeps {
		var ping []*results.Step
		for _, st := range s.Steps {
			if st.Run != nil && st.Run.Config.Protocol == "grpc-stream" {
				ping = append(ping, st)
			}
		}
		for _, c := range report.Cells(ping) {
			if _, done := m.msgs[c.Path]; done {
				continue // the first cell: fewest connections, one message in flight
			}
			if v, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok {
				// A ping-pong is two messages, one each way, as the study counts.
				m.msgs[c.Path] = 2 * v
			}
		}
	}
	for _, r := range report.Sizing(sweeps) {
		m.sizing[strconv.Itoa(r.Workers)] = r
		m.workers = append(m.workers, r.Workers)
	}
	slices.Sort(m.workers)
	return m
}

// Value is the measured figure of kind for what a published row measures.
func (m *Measured) Value(kind Kind, measure string) (float64, bool) {
	if m == nil || measure == "" {
		return 0, false
	}
	switch kind {
	case Gbps, RRus, CRRs:
		r, ok := m.cni[measure]
		if !ok {
			return 0, false
		}
		switch kind {
		case Gbps:
			return r.Gbps, r.HasGbps
		case RRus:
			return r.RR / 1e3, r.HasRR
		}
		return r.CRR / 1e3, r.HasCRR
	case Msgs:
		v, ok := m.msgs[measure]
		return v, ok
	case RPS:
		r, ok := m.sizing[measure]
		return r.RPS, ok && r.HasRPS
	case TPS:
		r, ok := m.sizing[measure]
		return r.TPS, ok && r.HasTPS
	}
	return 0, false
}

// Workers are the worker counts a sizing run measured.
func (m *Measured) Workers() []int { return m.workers }

// SizingRow is the sizing figure of a worker count, for the cost table.
func (m *Measured) SizingRow(workers int) (report.SizingRow, bool) {
	r, ok := m.sizing[strconv.Itoa(workers)]
	return r, ok
}
