package report

import (
	"math"
	"regexp"
	"sort"
	"strconv"

	"loadgen/results"
)

// CNIRow is one path of the CNI path matrix, as the Cilium/Calico report
// lays it out: throughput (tcp-stream) and the round-trip latency of a
// request/response on a kept connection (tcp-rr) and on a new connection
// per request (tcp-crr).
type CNIRow struct {
	Path string

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
			rows = append(rows, CNIRow{Path: path})
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
					g, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.WritePerSec * 8 / 1e9 })
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

// SizingRow is one line of the ingress sizing table (the NGINX Ingress
// study): how far a proxy with Workers worker processes, one per CPU,
// went in keep-alive requests/s and in TLS handshakes/s.
type SizingRow struct {
	Path    string
	Workers int

	HasRPS bool
	RPS    float64 // the best keep-alive requests/s over the ladder (median over repeats)
	HasTPS bool
	TPS    float64 // the best TLS handshakes/s: runs with TLS and a new connection per request
}

// workersRE recognises the path names of a sizing sweep: nginx-w4,
// nginx-workers4, ingress_workers=16. Naming the paths so is the hook:
// nothing else in a result says how many workers a proxy ran.
var workersRE = regexp.MustCompile(`(?i)(?:^|[-_.])w(?:orkers?)?[-_=]?(\d+)$`)

// Sizing builds the ingress sizing table from the paths whose names carry
// a worker count (see workersRE), sorted by workers. It is empty when no
// path is named so.
func Sizing(sweeps []*Sweep) []SizingRow {
	byPath := map[string]*SizingRow{}
	var rows []*SizingRow
	for _, s := range sweeps {
		for _, c := range Cells(s.Steps) {
			m := workersRE.FindStringSubmatch(c.Path)
			if m == nil {
				continue
			}
			r := byPath[c.Path]
			if r == nil {
				n, _ := strconv.Atoi(m[1])
				r = &SizingRow{Path: c.Path, Workers: n}
				byPath[c.Path] = r
				rows = append(rows, r)
			}
			newConn := func(st *results.Step) bool { return st.Run.Config.NewConn }
			tls := func(st *results.Step) bool { return st.Run.Config.TLS }
			var first *results.Step
			for _, st := range c.Steps {
				if st.Run != nil {
					first = st
					break
				}
			}
			if first == nil {
				continue
			}
			switch {
			case !newConn(first):
				if v, ok := c.Median(func(st *results.Step) float64 { return st.Run.Summary.RPS }); ok && (!r.HasRPS || v > r.RPS) {
					r.HasRPS, r.RPS = true, v
				}
			case tls(first):
				v, ok := c.Median(func(st *results.Step) float64 {
					d := st.Run.Summary.Duration.D().Seconds()
					if d <= 0 {
						return math.NaN()
					}
					return float64(st.Run.Summary.Connections.Established) / d
				})
				if ok && !math.IsNaN(v) && (!r.HasTPS || v > r.TPS) {
					r.HasTPS, r.TPS = true, v
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
