package study

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"loadgen/internal/units"
	"loadgen/results"
	"loadgen/results/report"
)

// SideRow is one sidecar proxy of mesh-ladder at one rung and payload:
// on a cluster (k8s-sidecar-PROXY, its mesh path beside the direct one)
// each side's proxy apart, as k8s run's client and server columns; locally
// (the sweep's PROXY path beside its baseline) both sides' processes in
// one watch. Figures are report.Cell's: medians over the cell's repeats
// of what each step recorded (cpu_per_1k, mib_per_1k in k8s run's CSV).
type SideRow struct {
	Proxy   string
	Rung    string
	Conns   int
	Payload int
	Cluster bool
	// Mesh is the proxy path's cell against its baseline (the direct
	// path on a cluster, the path without a sidecar locally); Base is the
	// baseline's own, Has false when the sweep has no baseline cell.
	Mesh report.CellStats
	Base report.CellStats
	// BothCPU and BothMiB are every proxy of the path together per 1,000
	// requests/s (report.Cell.Watched of role proxy).
	BothCPU, BothMiB       float64
	HasBothCPU, HasBothMiB bool
}

// sideProxies are the proxies whose rows SideRows reads: the cluster's
// sidecar mesh's and, locally, Envoy where it ran.
func sideProxies() []string { return append(slices.Clone(SidecarProxies), "envoy") }

// SideRows are mesh-ladder's sidecar rows, per proxy, rung and payload,
// a cluster's row before the local one of the same cell.
func (m *Measured) SideRows() []SideRow {
	var rows []SideRow
	for _, s := range m.sweeps {
		proxy, path, cluster := "", "", false
		for _, p := range sideProxies() {
			switch s.dir {
			case "k8s-" + SidecarMesh + "-" + p:
				proxy, path, cluster = p, "mesh", true
			case "sweep":
				if slices.ContainsFunc(s.Steps, func(st *results.Step) bool { return st.Path == p }) {
					rows = append(rows, sideRowsOf(s.Sweep, p, p, false)...)
				}
			}
		}
		if proxy != "" {
			rows = append(rows, sideRowsOf(s.Sweep, proxy, path, cluster)...)
		}
	}
	order := sideProxies()
	slices.SortStableFunc(rows, func(a, b SideRow) int {
		switch {
		case a.Proxy != b.Proxy:
			return slices.Index(order, a.Proxy) - slices.Index(order, b.Proxy)
		case a.Conns != b.Conns:
			return a.Conns - b.Conns
		case a.Payload != b.Payload:
			return a.Payload - b.Payload
		case a.Cluster != b.Cluster:
			if a.Cluster {
				return -1
			}
			return 1
		}
		return 0
	})
	return rows
}

// sideRowsOf are a sweep's closed-loop cells of path as proxy's rows.
func sideRowsOf(s *report.Sweep, proxy, path string, cluster bool) []SideRow {
	cells := report.Cells(s.Steps)
	base := report.BaselineOf(cells, baselineOf(s))
	var rows []SideRow
	for _, c := range cells {
		if c.Path != path || c.Rate != 0 {
			continue
		}
		r := SideRow{Proxy: proxy, Rung: c.Rung, Conns: c.Conns, Payload: c.Payload, Cluster: cluster}
		b := base(c)
		r.Mesh = c.Stats(b)
		if b != nil {
			r.Base = b.Stats(nil)
		}
		r.BothCPU, r.HasBothCPU = c.Watched("proxy", func(p results.ProcessCost) float64 { return p.CPUPer1kRPS })
		r.BothMiB, r.HasBothMiB = c.Watched("proxy", func(p results.ProcessCost) float64 { return p.MiBPer1kRPS })
		rows = append(rows, r)
	}
	return rows
}

// SidesTitle heads WriteSides' table.
const SidesTitle = "each sidecar proxy per side, per rung and payload: CPU cores and MiB per 1,000 requests/s (ours alone; medians over repeats)"

// WriteSides prints the sidecar rows: requests/s and the latency added
// over the baseline, then each side's CPU and memory per 1,000
// requests/s and both together; "–" where a row has no figure (a local
// row has no sides apart: one watch holds both sidecars' processes).
func WriteSides(w io.Writer, rows []SideRow) error {
	fmt.Fprintln(w, SidesTitle)
	fmt.Fprintln(w, "cluster: k8s run --mesh sidecar --mode both, each side its own proxy container, against the same pods' direct port; local: both sidecars' processes in one watch, against the pods without a sidecar")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "proxy\tstep\tmeasured\treq/s mesh / direct\t+p50\t+p99\tclient cpu/1k\tserver cpu/1k\tboth cpu/1k\tclient MiB/1k\tserver MiB/1k\tboth MiB/1k\t\n")
	for _, r := range rows {
		where := "local"
		if r.Cluster {
			where = "cluster"
		}
		rps := "–"
		if r.Mesh.OK {
			rps = strconv.FormatFloat(r.Mesh.RPS, 'f', 0, 64) + " / "
			if r.Base.OK {
				rps += strconv.FormatFloat(r.Base.RPS, 'f', 0, 64)
			} else {
				rps += "–"
			}
		}
		p50, p99 := "–", "–"
		if r.Mesh.OK && r.Mesh.HasAdded {
			p50, p99 = added(r.Mesh.AddP50), added(r.Mesh.AddP99)
		}
		side := func(s report.SideStats, f func(report.SideStats) float64) string {
			switch {
			case s.None:
				return "none"
			case !s.Has:
				return "–"
			}
			return strconv.FormatFloat(f(s), 'f', 3, 64)
		}
		cpu := func(s report.SideStats) float64 { return s.CPUPer }
		mib := func(s report.SideStats) float64 { return s.MiBPer1 }
		fmt.Fprintf(tw, "%s\t%s, %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Proxy, r.Rung, units.FormatBytes(int64(r.Payload)), where, rps, p50, p99,
			side(r.Mesh.Client, cpu), side(r.Mesh.Server, cpu), perK(r.BothCPU, r.HasBothCPU),
			side(r.Mesh.Client, mib), side(r.Mesh.Server, mib), perK(r.BothMiB, r.HasBothMiB))
	}
	return tw.Flush()
}

// added is a latency added over the baseline, from nanoseconds: +26µs,
// +1.7ms.
func added(ns float64) string {
	sign := "+"
	if ns < 0 {
		sign, ns = "-", -ns
	}
	if ns >= 1e6 {
		return sign + strconv.FormatFloat(ns/1e6, 'f', 1, 64) + "ms"
	}
	return sign + strconv.FormatFloat(ns/1e3, 'f', 0, 64) + "µs"
}

func perK(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
