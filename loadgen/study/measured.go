package study

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"loadgen/results"
	"loadgen/results/report"
	"loadgen/results/store"
)

// Figure is one measured figure over a cell's repeats: the median, and the
// least and most of the repeats (for a ratio or a difference of two
// cells, the widest the repeats allow). N is how many repeats have a run.
type Figure struct {
	Value, Min, Max float64
	N               int
	// Runs are the runs behind the figure (both cells' for a ratio or a
	// difference): what they measured of contention for CPU.
	Runs []*results.Run
	// Raw is, for a difference of two cells, the larger of the figures it
	// is the difference of: contention stretches those, not the difference.
	Raw float64
}

// Measured is what a study's run measured, by kind and by what a published
// row names (a lab path MODE.PATH, a worker count, or DIR:PATH).
type Measured struct {
	cni     map[string]cniFigures
	msgs    map[string]Figure
	rps     map[string]Figure
	tps     map[string]Figure
	sizing  map[string]report.SizingRow
	workers []int // the worker counts measured, ascending
	sweeps  []namedSweep
}

type cniFigures struct {
	gbps, rr, crr          Figure
	hasGbps, hasRR, hasCRR bool
}

// namedSweep is a sweep by its directory relative to the study's ("sweep",
// "k8s-istio", "lab/tcp-rr").
type namedSweep struct {
	dir string
	*report.Sweep
}

// ReadMeasured reads every sweep under dir (the study's results).
func ReadMeasured(dir string) (*Measured, error) {
	sweeps, err := ReadSweeps(dir)
	if err != nil {
		return nil, err
	}
	return measuredFrom(dir, sweeps), nil
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

// A study's cluster steps are `loadgen k8s paths` runs (k8s-MODE/, each
// with its paths.json): their rows read as the lab's paths of the mode the
// run's cluster ran (its --cni, or the Flannel backend its nodes ran, as
// paths.json records them), so that the same published rows (MODE.PATH)
// are measured on a cluster.
var clusterPaths = map[string]string{
	"host-host-other-node":     "node-node",          // hostNetwork ↔ hostNetwork across nodes
	"pod-pod-other-node":       "pod-pod-other-node", // pod ↔ pod across nodes
	"pod-pod-same-node":        "pod-pod-same-node",
	"pod-clusterip":            "pod-service-local",  // pod → a Service, its endpoint on the pod's node
	"pod-clusterip-other-node": "pod-service-remote", // its endpoint on the other node
}

// pathsRun is what a study reads of a k8s paths run's paths.json.
type pathsRun struct {
	Kind    string `json:"kind"`
	Flannel string `json:"flannel_backend"`
	CNI     string `json:"cni"`
}

// mode is the lab mode a run's rows are: the CNI it was told (--cni), or
// its nodes' Flannel backend.
func (p pathsRun) mode() string {
	if p.CNI != "" {
		return p.CNI
	}
	return p.Flannel
}

// ReadClusterMeasured reads the k8s paths runs of a study's directory
// whose CNI is known (--cni, or their nodes' Flannel backend), each run's
// paths as that mode's MODE.PATH; ok is false when there are none.
func ReadClusterMeasured(dir string) (m *Measured, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	var sweeps []*report.Sweep
	// The hosts' own network (node-node) is the same whatever the pods
	// run: the published tables measure it as host-gw's, so a cluster that
	// ran no host-gw gives it from the first run that measured it (by
	// directory name).
	hostGW, nodeNode := false, []*report.Sweep(nil)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "paths.json"))
		if err != nil {
			continue
		}
		var pr pathsRun
		if json.Unmarshal(b, &pr) != nil || pr.Kind != "k8s-paths" || pr.mode() == "" {
			continue
		}
		ss, err := ReadSweeps(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, false, err
		}
		hostGW = hostGW || pr.mode() == "host-gw"
		first := nodeNode == nil
		for _, sw := range ss {
			var steps, nn []*results.Step
			for _, st := range sw.Steps {
				lab, known := clusterPaths[st.Path]
				if !known {
					continue
				}
				c := *st
				c.Path = pr.mode() + "." + lab
				steps = append(steps, &c)
				if lab == "node-node" && first {
					n := *st
					n.Path = "host-gw." + lab
					nn = append(nn, &n)
				}
			}
			sweeps = append(sweeps, &report.Sweep{Name: sw.Name, Manifest: sw.Manifest, Steps: steps})
			if len(nn) > 0 {
				nodeNode = append(nodeNode, &report.Sweep{Name: sw.Name, Manifest: sw.Manifest, Steps: nn})
			}
		}
	}
	if !hostGW {
		sweeps = append(sweeps, nodeNode...)
	}
	if len(sweeps) == 0 {
		return nil, false, nil
	}
	return measuredFrom(dir, sweeps), true, nil
}

// Set is what one kind of run of a study measured: the lab's (or the
// study's own command's), or a cluster's.
type Set struct {
	// Where is "" for the study's own plan alone, else where the figures
	// were measured, for a heading.
	Where string
	M     *Measured
}

// MeasuredSets are what a study's directory measured: the lab's (what
// ReadMeasured reads) and, where the directory holds k8s paths runs of a
// known CNI, the cluster's; the lab's left out when it measured none of the
// published rows and a cluster did.
func MeasuredSets(dir string, pub Published) ([]Set, error) {
	lab, err := ReadMeasured(dir)
	if err != nil {
		return nil, err
	}
	cl, ok, err := ReadClusterMeasured(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []Set{{M: lab}}, nil
	}
	sets := []Set{{Where: ClusterWhere, M: cl}}
	if lab.measuresAny(pub) {
		sets = append([]Set{{Where: LabWhere, M: lab}}, sets...)
	}
	return sets, nil
}

// Where a Set was measured, as its heading says it.
const (
	LabWhere     = "by the lab (network namespaces joined as each backend joins its nodes)"
	ClusterWhere = "on the cluster (loadgen k8s paths, each run's rows as the mode its nodes ran: --cni, or their Flannel backend)"
)

// measuresAny tells whether m has a figure for a published row.
func (m *Measured) measuresAny(pub Published) bool {
	for _, t := range pub.Tables {
		for _, r := range t.Rows {
			if _, ok := m.Value(t, r.Measure); ok {
				return true
			}
		}
	}
	return false
}

// stat is a metric's figure over a cell's runs that keep (nil: all); runs
// where f is NaN have no figure.
func stat(c *report.Cell, keep func(*results.Step) bool, f func(*results.Step) float64) (Figure, bool) {
	var xs []float64
	var runs []*results.Run
	for _, st := range c.Steps {
		if st.Run == nil || (keep != nil && !keep(st)) {
			continue
		}
		if v := f(st); !math.IsNaN(v) {
			xs = append(xs, v)
			runs = append(runs, st.Run)
		}
	}
	if len(xs) == 0 {
		return Figure{}, false
	}
	slices.Sort(xs)
	n := len(xs)
	med := xs[n/2]
	if n%2 == 0 {
		med = (xs[n/2-1] + xs[n/2]) / 2
	}
	return Figure{Value: med, Min: xs[0], Max: xs[n-1], N: n, Runs: runs}, true
}

func (f Figure) scale(k float64) Figure {
	return Figure{Value: f.Value * k, Min: f.Min * k, Max: f.Max * k, N: f.N, Runs: f.Runs}
}

func measuredFrom(root string, sweeps []*report.Sweep) *Measured {
	m := &Measured{cni: map[string]cniFigures{}, msgs: map[string]Figure{}, rps: map[string]Figure{},
		tps: map[string]Figure{}, sizing: map[string]report.SizingRow{}}
	for _, s := range sweeps {
		rel, err := filepath.Rel(root, s.Name)
		if err != nil || root == "" {
			rel = s.Name
		}
		m.sweeps = append(m.sweeps, namedSweep{dir: filepath.ToSlash(rel), Sweep: s})
		m.addLab(s)
		m.addSizing(s)
	}
	for _, r := range report.Sizing(sweeps) {
		m.sizing[strconv.Itoa(r.Workers)] = r
		m.workers = append(m.workers, r.Workers)
	}
	slices.Sort(m.workers)
	return m
}

// addLab reads a lab sweep's paths as report.CNIMatrix does (throughput:
// the best cell; RR and CRR: the lightest; gRPC ping-pong: the first, one
// message in flight), keeping the repeats' spread.
func (m *Measured) addLab(s *report.Sweep) {
	byProto := map[string][]*results.Step{}
	for _, st := range s.Steps {
		if st.Run != nil {
			byProto[st.Run.Config.Protocol] = append(byProto[st.Run.Config.Protocol], st)
		}
	}
	for _, c := range report.Cells(byProto["tcp-stream"]) {
		r := m.cni[c.Path]
		if g, ok := stat(c, nil, func(st *results.Step) float64 { return st.Run.Summary.Gbps() }); ok && (!r.hasGbps || g.Value > r.gbps.Value) {
			r.gbps, r.hasGbps = g, true
		}
		m.cni[c.Path] = r
	}
	for _, proto := range []string{"tcp-rr", "tcp-crr"} {
		for _, c := range report.Cells(byProto[proto]) {
			r := m.cni[c.Path]
			has, v := &r.hasRR, &r.rr
			if proto == "tcp-crr" {
				has, v = &r.hasCRR, &r.crr
			}
			if *has {
				continue // cells come lightest first
			}
			if f, ok := stat(c, nil, func(st *results.Step) float64 { return float64(st.Run.Summary.Latency.Mean) / 1e3 }); ok {
				*has, *v = true, f
			}
			m.cni[c.Path] = r
		}
	}
	for _, c := range report.Cells(byProto["grpc-stream"]) {
		if _, done := m.msgs[c.Path]; done {
			continue // the first cell: fewest connections, one message in flight
		}
		if f, ok := stat(c, nil, func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok {
			// A ping-pong is two messages, one each way, as the study counts.
			m.msgs[c.Path] = f.scale(2)
		}
	}
}

// addSizing reads a size sweep's worker counts as report.Sizing does: the
// best keep-alive requests/s and the best TLS handshakes/s of each count.
func (m *Measured) addSizing(s *report.Sweep) {
	for _, c := range report.Cells(s.Steps) {
		var first *results.Step
		for _, st := range c.Steps {
			if st.Run != nil && st.Workers > 0 {
				first = st
				break
			}
		}
		if first == nil {
			continue
		}
		k := strconv.Itoa(first.Workers)
		switch {
		case !first.Run.Config.NewConn:
			if f, ok := stat(c, nil, func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok && f.Value > m.rps[k].Value {
				m.rps[k] = f
			}
		case first.Run.Config.TLS:
			f, ok := stat(c, nil, func(st *results.Step) float64 {
				d := st.Run.Summary.Duration.D().Seconds()
				if d <= 0 {
					return math.NaN()
				}
				return float64(st.Run.Summary.Connections.Measured) / d
			})
			if ok && f.Value > m.tps[k].Value {
				m.tps[k] = f
			}
		}
	}
}

// Value is the measured figure of a table's kind for what a published row
// measures.
//
// A measure may name alternatives, A|B: the first measured (a row of
// the local sidecars reads the local sweep, or the same proxy's k8s run
// of loadgen's sidecar mesh on a cluster).
func (m *Measured) Value(t PublishedTable, measure string) (Figure, bool) {
	if m == nil || measure == "" {
		return Figure{}, false
	}
	if alts := strings.Split(measure, "|"); len(alts) > 1 {
		for _, a := range alts {
			if f, ok := m.Value(t, a); ok {
				return f, true
			}
		}
		return Figure{}, false
	}
	switch t.Kind {
	case Gbps, RRus, CRRs:
		r := m.cni[measure]
		switch t.Kind {
		case Gbps:
			return r.gbps, r.hasGbps
		case RRus:
			return r.rr, r.hasRR
		}
		return r.crr, r.hasCRR
	case Msgs:
		f, ok := m.msgs[measure]
		return f, ok
	case RPS:
		f, ok := m.rps[measure]
		return f, ok
	case TPS:
		f, ok := m.tps[measure]
		return f, ok
	}
	if t.Kind.sweepKind() {
		return m.sweepValue(t, measure)
	}
	return Figure{}, false
}

// sweepValue reads DIR:PATH at the table's payload and rung; * alone is a
// sweep's own baseline path, 1 for the ratio kinds.
func (m *Measured) sweepValue(t PublishedTable, measure string) (Figure, bool) {
	if measure == "*" {
		if t.Kind != RPSRatio && t.Kind != P50Ratio {
			return Figure{}, false
		}
		n := 0
		for _, s := range m.sweeps {
			if base := baselineOf(s.Sweep); base != "" {
				if c := pickCell(s.Sweep, base, t); c != nil {
					if f, ok := stat(c, nil, func(*results.Step) float64 { return 1 }); ok {
						n = max(n, f.N)
					}
				}
			}
		}
		return Figure{Value: 1, Min: 1, Max: 1, N: n}, n > 0
	}
	dir, path, ok := strings.Cut(measure, ":")
	if !ok {
		return Figure{}, false
	}
	for _, s := range m.sweeps {
		if dir != "*" && s.dir != dir {
			continue
		}
		c := pickCell(s.Sweep, path, t)
		if c == nil {
			continue
		}
		switch t.Kind {
		case ProxyCPU:
			return stat(c, nil, proxies(func(w results.ProcessCost) float64 { return w.CPUPer1kRPS }, sum))
		case ProxyMem:
			return stat(c, nil, proxies(func(w results.ProcessCost) float64 { return float64(w.MemMean) / (1 << 20) }, sum))
		case ProxyMemMax:
			return stat(c, nil, proxies(func(w results.ProcessCost) float64 { return float64(w.MemMax) / (1 << 20) }, math.Max))
		}
		base := baselineOf(s.Sweep)
		if base == "" {
			return Figure{}, false
		}
		f := func(st *results.Step) float64 { return st.Run.Summary.RPS }
		if t.Kind != RPSRatio {
			f = func(st *results.Step) float64 { return st.Run.Summary.Latency.P50.D().Seconds() * 1e3 }
		}
		a, ok := stat(c, nil, f)
		if !ok {
			return Figure{}, false
		}
		if path == base { // 1 or 0 by definition: no contention moves it
			if t.Kind == AddedP50 {
				return Figure{N: a.N}, true
			}
			return Figure{Value: 1, Min: 1, Max: 1, N: a.N}, true
		}
		bc := pickCell(s.Sweep, base, t)
		if bc == nil {
			return Figure{}, false
		}
		b, ok := stat(bc, nil, f)
		if !ok {
			return Figure{}, false
		}
		runs := append(slices.Clip(a.Runs), b.Runs...)
		if t.Kind == AddedP50 {
			return Figure{Value: a.Value - b.Value, Min: a.Min - b.Max, Max: a.Max - b.Min, N: min(a.N, b.N), Runs: runs, Raw: max(a.Max, b.Max)}, true
		}
		if b.Value <= 0 || b.Min <= 0 {
			return Figure{}, false
		}
		return Figure{Value: a.Value / b.Value, Min: a.Min / b.Max, Max: a.Max / b.Min, N: min(a.N, b.N), Runs: runs}, true
	}
	return Figure{}, false
}

func sum(a, b float64) float64 { return a + b }

// proxies folds a figure of a step's watched proxies; NaN when the step
// watched none, or one could not be measured.
func proxies(f func(results.ProcessCost) float64, fold func(a, b float64) float64) func(*results.Step) float64 {
	return func(st *results.Step) float64 {
		v, n := 0.0, 0
		for _, w := range st.Watched {
			if w.Role != "proxy" || w.NoProxy != "" { // a side without a proxy in the mode
				continue
			}
			if w.Unmeasured != "" {
				return math.NaN()
			}
			v, n = fold(v, f(w)), n+1
		}
		if n == 0 {
			return math.NaN()
		}
		return v
	}
}

// baselineOf is the name of a sweep's baseline path, "" when it has none.
func baselineOf(s *report.Sweep) string {
	if s.Manifest != nil && s.Manifest.Baseline != "" {
		return s.Manifest.Baseline
	}
	for _, st := range s.Steps {
		if st.Baseline {
			return st.Path
		}
	}
	return ""
}

// pickCell is path's closed-loop cell at the table's payload (the
// smallest when it names none) and rung (the fewest connections).
func pickCell(s *report.Sweep, path string, t PublishedTable) *report.Cell {
	payload := -1
	for _, c := range report.Cells(s.Steps) {
		if c.Path != path || c.Rate != 0 {
			continue
		}
		if payload < 0 {
			payload = c.Payload // cells come smallest payload first
			if t.Payload > 0 {
				payload = t.Payload
			}
		}
		if c.Payload == payload && (t.Rung == "" || c.Rung == t.Rung) {
			return c // and fewest connections first
		}
	}
	return nil
}

// Workers are the worker counts a sizing run measured.
func (m *Measured) Workers() []int { return m.workers }

// SizingRow is the sizing figure of a worker count, for the cost table.
func (m *Measured) SizingRow(workers int) (report.SizingRow, bool) {
	r, ok := m.sizing[strconv.Itoa(workers)]
	return r, ok
}

// SizingRows are the sizing figures of the worker counts a sizing run
// measured, in order, for the cost table (report.CostTable).
func (m *Measured) SizingRows() []report.SizingRow {
	var rows []report.SizingRow
	for _, wk := range m.workers {
		if r, ok := m.SizingRow(wk); ok {
			rows = append(rows, r)
		}
	}
	return rows
}

// Read reads a results path for loadgen report: a study's directory (it
// holds Marker) as its steps' sweeps at any depth (ReadSweeps), anything
// else as report.Read does.
func Read(path string) ([]*report.Sweep, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		if _, err := os.Stat(filepath.Join(path, Marker)); err == nil {
			return ReadSweeps(path)
		}
	}
	return report.Read(path)
}
