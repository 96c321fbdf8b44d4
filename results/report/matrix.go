package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"loadgen/results"
)

// CNIRow is one path of the CNI path matrix, as the Cilium/Calico report
// lays it out: throughput (tcp-stream) and the round-trip latency of a
// request/response on a kept connection (tcp-rr) and on a new connection
// per request (tcp-crr).
type CNIRow struct {
	Path string // the sweep's path name: "vxlan.pod-pod-other-node" or "loopback"
	// Mode and Base split a path named MODE.PATH (as loadgen lab names
	// them, a path per CNI mode): "vxlan" and "pod-pod-other-node". A path
	// without a dot has no Mode and Base is Path.
	Mode, Base string

	HasGbps bool
	Gbps    float64 // tcp-stream: the best over the ladder and payloads (median over repeats)

	HasRR, HasCRR bool
	RR, CRR       float64 // mean latency in ns at the sweep's fewest connections and smallest payload
	RRRung        string  // the ladder step RR and CRR were read at
	CRRRung       string
}

// CNIMatrix builds the matrix from every tcp-rr, tcp-crr and tcp-stream
// step of the sweeps, a row per path in order of appearance. It is empty
// when no sweep drove those protocols.
func CNIMatrix(sweeps []*Sweep) []CNIRow {
	var rows []CNIRow
	at := map[string]int{}
	row := func(path string) *CNIRow {
		i, ok := at[path]
		if !ok {
			i = len(rows)
			at[path] = i
			mode, base := SplitModePath(path)
			rows = append(rows, CNIRow{Path: path, Mode: mode, Base: base})
		}
		return &rows[i]
	}
	for _, s := range sweeps {
		byProto := map[string][]*results.Step{}
		for _, st := range s.Steps {
			if st.Run != nil {
				p := st.Run.Config.Protocol
				byProto[p] = append(byProto[p], st)
			}
		}
		for _, proto := range []string{"tcp-stream", "tcp-rr", "tcp-crr"} {
			for _, c := range Cells(byProto[proto]) {
				r := row(c.Path)
				switch proto {
				case "tcp-stream":
					g, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.Gbps() })
					if ok && (!r.HasGbps || g > r.Gbps) {
						r.HasGbps, r.Gbps = true, g
					}
				case "tcp-rr", "tcp-crr":
					// Cells come sorted by payload then connections: the first
					// cell of a path is its lightest.
					has, v, rung := &r.HasRR, &r.RR, &r.RRRung
					if proto == "tcp-crr" {
						has, v, rung = &r.HasCRR, &r.CRR, &r.CRRRung
					}
					if *has {
						continue
					}
					if m, ok := c.Median(latency(func(l results.Latency) results.Duration { return l.Mean })); ok {
						*has, *v, *rung = true, m, c.Rung
					}
				}
			}
		}
	}
	return rows
}

// cells formats a row's throughput and RR and CRR latencies (µs, with the
// ladder step they were read at), "–" where there is no figure.
func (r CNIRow) cells() (gbps, rr, crr string) {
	gbps, rr, crr = "–", "–", "–"
	if r.HasGbps {
		gbps = fmt.Sprintf("%.2f", r.Gbps)
	}
	if r.HasRR {
		rr = fmt.Sprintf("%.1f (%s)", r.RR/1e3, r.RRRung)
	}
	if r.HasCRR {
		crr = fmt.Sprintf("%.1f (%s)", r.CRR/1e3, r.CRRRung)
	}
	return gbps, rr, crr
}

// ModePath names a lab path per CNI mode, MODE.PATH, as SplitModePath
// reads it.
func ModePath(mode, path string) string { return mode + "." + path }

// SplitModePath splits a lab path name MODE.PATH into its CNI mode and
// path; a name without a dot has no mode.
func SplitModePath(name string) (mode, path string) {
	if i := strings.IndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// CNIGrid lays the matrix out as the CNI report does: a row per path, a
// column per mode, in order of appearance; paths without a mode (the
// loopback baseline) are in the column "". Cell is nil where a mode has
// no figure for a path.
type CNIGrid struct {
	Paths, Modes []string
	cells        map[[2]string]*CNIRow
}

// Grid builds the grid of rows.
func Grid(rows []CNIRow) CNIGrid {
	g := CNIGrid{cells: map[[2]string]*CNIRow{}}
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(g.Paths, r.Base) {
			g.Paths = append(g.Paths, r.Base)
		}
		if !slices.Contains(g.Modes, r.Mode) {
			g.Modes = append(g.Modes, r.Mode)
		}
		g.cells[[2]string{r.Base, r.Mode}] = r
	}
	return g
}

// Cell is the row of path under mode, nil when there is none.
func (g CNIGrid) Cell(path, mode string) *CNIRow { return g.cells[[2]string{path, mode}] }

// Has tells whether any cell has a figure of metric m.
func (g CNIGrid) Has(m CNIMetric) bool {
	for _, r := range g.cells {
		if _, ok := m.Value(*r); ok {
			return true
		}
	}
	return false
}

// CNIMetric is one of the matrix's figures, for a table or chart per metric.
type CNIMetric struct {
	Name, Unit string
	Value      func(CNIRow) (float64, bool)
}

// CNIMetrics are the matrix's figures: throughput, then the RR and CRR
// latencies in µs.
var CNIMetrics = []CNIMetric{
	{"TCP_STREAM", "Gbit/s", func(r CNIRow) (float64, bool) { return r.Gbps, r.HasGbps }},
	{"TCP_RR", "µs", func(r CNIRow) (float64, bool) { return r.RR / 1e3, r.HasRR }},
	{"TCP_CRR", "µs", func(r CNIRow) (float64, bool) { return r.CRR / 1e3, r.HasCRR }},
}

// CNITable prints the CNI path matrix of the sweeps as text, nothing when
// they drove no raw TCP protocol. Paths named per mode (MODE.PATH) make a
// path × mode table per metric.
func CNITable(w io.Writer, sweeps []*Sweep) error {
	return cniTable(w, CNIMatrix(sweeps))
}

// CNISection is the matrix loadgen lab prints as it ends: of the sweeps
// in dirs (one per protocol), under a title that says where the latencies
// were read (CNIReadAt), nothing when the sweeps drove no raw TCP
// protocol.
func CNISection(w io.Writer, dirs []string) error {
	var sweeps []*Sweep
	for _, dir := range dirs {
		s, err := ReadSweep(dir)
		if err != nil {
			return err
		}
		sweeps = append(sweeps, s)
	}
	return cniSection(w, sweeps)
}

func cniSection(w io.Writer, sweeps []*Sweep) error {
	rows := CNIMatrix(sweeps)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nCNI path matrix (network namespaces on one machine%s)\n", cniLatencyNote(CNIReadAt(rows)))
	return cniTable(w, rows)
}

// CNIReadAt are the ladder steps the matrix's RR and CRR latencies were
// read at, in order of first appearance: each path's lightest cell with
// a figure (CNIMatrix), whatever order the ladder was given in. Empty when
// the matrix has no latency.
func CNIReadAt(rows []CNIRow) []string {
	var out []string
	add := func(has bool, rung string) {
		if has && !slices.Contains(out, rung) {
			out = append(out, rung)
		}
	}
	for _, r := range rows {
		add(r.HasRR, r.RRRung)
		add(r.HasCRR, r.CRRRung)
	}
	return out
}

// cniLatencyNote is the title's word on the latencies read at rungs.
func cniLatencyNote(rungs []string) string {
	switch len(rungs) {
	case 0:
		return ""
	case 1:
		return "; latency is the mean at " + rungs[0] + ", the median over repeats"
	}
	return "; latency is the mean at each path's fewest connections with a figure (" + strings.Join(rungs, ", ") + "), the median over repeats"
}

func cniTable(w io.Writer, rows []CNIRow) error {
	if len(rows) == 0 {
		return nil
	}
	if g := Grid(rows); len(g.Modes) > 1 || g.Modes[0] != "" {
		return cniGridTable(w, g)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "path\tGbit/s (tcp-stream)\tTCP_RR us\tTCP_CRR us\t\n")
	for _, r := range rows {
		g, rr, crr := r.cells()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.Path, g, rr, crr)
	}
	return tw.Flush()
}

// SizingRow is one line of the ingress sizing table (the NGINX Ingress
// study): how far a proxy with Workers worker processes, one per CPU, went
// in keep-alive requests/s and in TLS handshakes/s, and the CPU it spent
// getting there.
type SizingRow struct {
	Workers int
	Paths   string // the paths measured with this many workers, comma-separated

	HasRPS bool
	RPS    float64 // the best keep-alive requests/s over the ladder (median over repeats)
	RPSCPU float64 // the watched proxy's CPU cores (mean) in that cell; 0 when not watched
	HasTPS bool
	TPS    float64 // the best TLS handshakes/s: TLS runs with a new connection per request
	TPSCPU float64
}

// Sizing builds the ingress sizing table from the steps whose path names a
// proxy worker count (a sweep path's workers:, which `loadgen size` sets),
// a row per count in ascending order. It is empty when no path does, and
// leaves out sweeps that are not sizings (Sweep.sizing: sidecars have
// worker counts of their own).
func Sizing(sweeps []*Sweep) []SizingRow {
	byWorkers := map[int]*SizingRow{}
	var rows []*SizingRow
	for _, s := range sweeps {
		if !s.sizing() {
			continue
		}
		for _, c := range Cells(s.Steps) {
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
			r := byWorkers[first.Workers]
			if r == nil {
				r = &SizingRow{Workers: first.Workers}
				byWorkers[first.Workers] = r
				rows = append(rows, r)
			}
			if !slices.Contains(strings.Split(r.Paths, ", "), c.Path) {
				r.Paths = strings.TrimPrefix(r.Paths+", "+c.Path, ", ")
			}
			cpu, _ := c.Watched("proxy", func(w results.ProcessCost) float64 { return w.CPUMean })
			switch {
			case !first.Run.Config.NewConn:
				if v, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok && (!r.HasRPS || v > r.RPS) {
					r.HasRPS, r.RPS, r.RPSCPU = true, v, cpu
				}
			case first.Run.Config.TLS:
				v, ok := c.Median(func(st *results.Step) float64 {
					d := st.Run.Summary.Duration.D().Seconds()
					if d <= 0 {
						return math.NaN()
					}
					return float64(st.Run.Summary.Connections.Measured) / d
				})
				if ok && !math.IsNaN(v) && (!r.HasTPS || v > r.TPS) {
					r.HasTPS, r.TPS, r.TPSCPU = true, v, cpu
				}
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Workers < rows[j].Workers })
	out := make([]SizingRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}

// Cost is what Workers CPUs cost a month at price per CPU, and that cost
// per 1000 keep-alive requests/s (0 without a keep-alive figure).
func (r SizingRow) Cost(price float64) (month, per1kRPS float64) {
	month = float64(r.Workers) * price
	if r.HasRPS && r.RPS > 0 {
		per1kRPS = month / (r.RPS / 1000)
	}
	return month, per1kRPS
}

func (r SizingRow) costCells(price float64) (month, per1k string) {
	c := r.CostCells(price)
	return c[0], c[1]
}

// CostCells formats Cost for the tables: the monthly cost and that per
// 1000 requests/s ("–" without a keep-alive figure).
func (r SizingRow) CostCells(price float64) [2]string {
	m, p := r.Cost(price)
	per1k := "–"
	if p > 0 {
		per1k = fmt.Sprintf("%.2f", p)
	}
	return [2]string{fmt.Sprintf("%.2f", m), per1k}
}

// SizingTable prints the ingress sizing table of a sweep's steps as text,
// nothing when no step names a worker count. A CPU price above 0 adds the
// monthly cost columns.
func SizingTable(w io.Writer, steps []*results.Step, cpuPrice float64) error {
	rows := Sizing([]*Sweep{{Steps: steps}})
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "workers\treq/s\tper worker\tproxy cpu\tTLS hs/s\tper worker\tproxy cpu\t"
	if cpuPrice > 0 {
		head += costColumns
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		rps, rpsPer, rpsCPU := sizingCells(r.HasRPS, r.RPS, r.RPSCPU, r.Workers)
		tps, tpsPer, tpsCPU := sizingCells(r.HasTPS, r.TPS, r.TPSCPU, r.Workers)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Workers, rps, rpsPer, rpsCPU, tps, tpsPer, tpsCPU)
		if cpuPrice > 0 {
			month, per1k := r.costCells(cpuPrice)
			fmt.Fprintf(tw, "%s\t%s\t", month, per1k)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// costColumns head the cost columns of SizingTable and CostTable.
const costColumns = "cost/month\tper 1k req/s\t"

// CostTable prints what each worker count of rows costs a month at price
// per CPU, and that per 1000 keep-alive requests/s: a study's cost table,
// the sizing table's cost columns alone.
func CostTable(w io.Writer, rows []SizingRow, price float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workers\t"+costColumns)
	for _, r := range rows {
		month, per1k := r.costCells(price)
		fmt.Fprintf(tw, "%d\t%s\t%s\t\n", r.Workers, month, per1k)
	}
	return tw.Flush()
}

func cniGridTable(w io.Writer, g CNIGrid) error {
	printed := 0
	for _, m := range CNIMetrics {
		if !g.Has(m) {
			continue // no sweep drove this protocol
		}
		if printed++; printed > 1 {
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s %s\t", m.Name, m.Unit)
		for _, mode := range g.Modes {
			if mode == "" {
				mode = "no CNI"
			}
			fmt.Fprintf(tw, "%s\t", mode)
		}
		fmt.Fprintln(tw)
		for _, p := range g.Paths {
			fmt.Fprintf(tw, "%s\t", p)
			for _, mode := range g.Modes {
				cell := "–"
				if r := g.Cell(p, mode); r != nil {
					if v, ok := m.Value(*r); ok {
						cell = fmt.Sprintf("%.1f", v)
						if m.Unit == "Gbit/s" {
							cell = fmt.Sprintf("%.2f", v)
						}
					}
				}
				fmt.Fprintf(tw, "%s\t", cell)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
