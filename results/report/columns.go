package report

import (
	"fmt"
	"strings"

	"loadgen/results/compare"
)

// unit is how a protocol's figures read: its throughput (netperf's
// transactions/s for tcp-rr and tcp-crr, messages/s for gRPC ping-pong,
// Gbit/s for tcp-stream and udp-stream), what CPU is counted per, and its latencies.
type unit struct {
	rate   string // head of the throughput column
	per    string // CPU is counted per 1000 of rate ("1k"), or per Gbit/s ("Gbit")
	stream bool   // tcp-stream: throughput is the figure; a write's latency is not shown
	micros bool   // tcp-rr, tcp-crr: latencies are µs figures, as netperf gives them
}

func unitOf(protocol string) unit {
	switch protocol {
	case "tcp-stream", "udp-stream":
		return unit{rate: "Gbit/s", per: "Gbit", stream: true}
	case "tcp-rr", "tcp-crr", "udp-rr":
		return unit{rate: "trans/s", per: "1k", micros: true}
	case "grpc-stream":
		return unit{rate: "msgs/s", per: "1k"}
	}
	return unit{rate: "req/s", per: "1k"}
}

// RateUnit is the unit of a protocol's rate, as the tables print it
// (req/s, msgs/s, trans/s, Gbit/s); stream: the figure is throughput, and
// a write's latency is not shown.
func RateUnit(protocol string) (rate string, stream bool) {
	u := unitOf(protocol)
	return u.rate, u.stream
}

// column is one column of the sweep table.
type column struct {
	key   string // stable name, for columnPriority
	head  string
	group string // the HTML header's group: latency, added over baseline, proxy
	first bool   // among the columns a reader needs first: always shown
	left  bool
	get   func(CellStats) string
}

// columnPriority is the order in which the other columns join the first
// ones while the table still fits the width.
var columnPriority = []string{"+cpu", "p90", "p99.9", "proxy cpu", "client cpu/unit", "server cpu/unit", "timeouts", "+MiB", "proxy MiB",
	"+p50", "target cpu", "gen cpu", "+p90", "+p99.9", "client cpu", "server cpu", "client MiB", "server MiB", "p95",
	"+p50/hop", "+cpu/hop", "proxy cpu/hop", "node cpu", "cp cpu",
	"first p90", "msgs", "gap p50", "first max", "gap p90", "gap max"}

// sweepColumns are every column of a sweep table in the protocol's units,
// in the order they print. Step, path and flags are filled by the table.
// Past one hop (a chain of targets), the added figures per hop follow
// the added ones.
func sweepColumns(u unit, hops int) []column {
	latGroup := "latency"
	if u.micros {
		latGroup = "latency, µs"
	}
	lat := func(key string, first bool, f func(CellStats) float64) column {
		return column{key: key, head: key, group: latGroup, first: first, get: func(s CellStats) string {
			switch {
			case !s.Answered:
				return "—" // nothing answered: there is no latency to show
			case u.micros:
				return fmt.Sprintf("%.1f", f(s)/1e3)
			}
			return ms(f(s))
		}}
	}
	added := func(key string, first bool, f func(CellStats) float64, ci func(CellStats) compare.Interval) column {
		return column{key: key, head: key, group: "added over baseline", first: first, get: func(s CellStats) string {
			switch {
			case !s.Answered:
				return "—"
			case !s.HasAdded:
				return ""
			case u.micros:
				return belowZero(withInterval(f(s)/1e3, scaled(ci(s), 1e-3), func(v float64) string { return fmt.Sprintf("%+.1f", v) }), f(s), ci(s), s)
			}
			return belowZero(withInterval(f(s), ci(s), delta), f(s), ci(s), s)
		}}
	}
	cost := func(key, head, group, format string, has func(CellStats) bool, f func(CellStats) float64) column {
		return column{key: key, head: head, group: group, first: key == "cpu/unit", get: func(s CellStats) string {
			if !has(s) {
				return ""
			}
			return fmt.Sprintf(format, f(s))
		}}
	}
	addedCostCol := func(key, head, format string, f func(CellStats) float64, ci func(CellStats) compare.Interval) column {
		return column{key: key, head: head, group: "added over baseline", get: func(s CellStats) string {
			if !s.HasAddedCost {
				return ""
			}
			return withInterval(f(s), ci(s), func(v float64) string { return fmt.Sprintf(format, v) })
		}}
	}
	proxy := func(s CellStats) bool { return s.HasProxy }
	// A side's proxies (a sidecar mesh's): "—" where the mode puts none.
	sideCol := func(key, head, format string, side func(CellStats) SideStats, f func(SideStats) float64) column {
		return column{key: key, head: head, group: "proxy", get: func(s CellStats) string {
			switch sd := side(s); {
			case sd.None:
				return "—"
			case sd.Has:
				return fmt.Sprintf(format, f(sd))
			}
			return ""
		}}
	}
	cols := []column{{key: "step", head: "step", first: true, left: true}, {key: "path", head: "path", first: true, left: true}}
	if u.stream {
		cols = append(cols, column{key: "rate", head: u.rate, first: true, get: func(s CellStats) string { return fmt.Sprintf("%.2f", s.Gbps) }})
	} else {
		cols = append(cols, column{key: "rate", head: u.rate, first: true, get: func(s CellStats) string { return fmt.Sprintf("%.0f", s.RPS) }},
			lat("p50", true, func(s CellStats) float64 { return s.P50 }),
			lat("p90", false, func(s CellStats) float64 { return s.P90 }),
			lat("p95", false, func(s CellStats) float64 { return s.P95 }),
			lat("p99", true, func(s CellStats) float64 { return s.P99 }),
			lat("p99.9", false, func(s CellStats) float64 { return s.P999 }))
	}
	cols = append(cols,
		column{key: "errors", head: "errors", first: true, get: func(s CellStats) string { return fmt.Sprintf("%.0f", s.Errors) }},
		column{key: "timeouts", head: "timeouts", get: func(s CellStats) string { return fmt.Sprintf("%.0f", s.Timeouts) }})
	if u.stream {
		cols = append(cols, column{key: "+p99", head: "+Gbit/s", group: "added over baseline", first: true, get: func(s CellStats) string {
			if !s.HasAdded {
				return ""
			}
			return withInterval(s.AddGbps, s.AddGbpsCI, func(v float64) string { return fmt.Sprintf("%+.2f", v) })
		}})
	} else {
		cols = append(cols,
			added("+p50", false, func(s CellStats) float64 { return s.AddP50 }, func(s CellStats) compare.Interval { return s.AddP50CI }),
			added("+p90", false, func(s CellStats) float64 { return s.AddP90 }, func(s CellStats) compare.Interval { return s.AddP90CI }),
			added("+p99", true, func(s CellStats) float64 { return s.AddP99 }, func(s CellStats) compare.Interval { return s.AddP99CI }),
			added("+p99.9", false, func(s CellStats) float64 { return s.AddP999 }, func(s CellStats) compare.Interval { return s.AddP999CI }))
	}
	cols = append(cols,
		addedCostCol("+cpu", "+cpu/"+u.per, "%+.3f", func(s CellStats) float64 { return s.AddCPUPerUnit }, func(s CellStats) compare.Interval { return s.AddCPUCI }),
		addedCostCol("+MiB", "+MiB", "%+.1f", func(s CellStats) float64 { return s.AddMiB }, func(s CellStats) compare.Interval { return s.AddMiBCI }))
	if hops > 1 {
		cols = append(cols, perHopColumns(u, hops)...)
	}
	cols = append(cols, messageColumns(u)...)
	return append(cols,
		cost("proxy cpu", "proxy cpu", "proxy", "%.2f", proxy, func(s CellStats) float64 { return s.ProxyCPU }),
		cost("cpu/unit", "cpu/"+u.per, "proxy", "%.3f", proxy, func(s CellStats) float64 { return s.ProxyCPUPerUnit }),
		cost("proxy MiB", "proxy MiB", "proxy", "%.1f", proxy, func(s CellStats) float64 { return s.ProxyMiB }),
		sideCol("client cpu", "client cpu", "%.2f", func(s CellStats) SideStats { return s.Client }, func(s SideStats) float64 { return s.CPU }),
		sideCol("client cpu/unit", "client cpu/"+u.per, "%.3f", func(s CellStats) SideStats { return s.Client }, func(s SideStats) float64 { return s.CPUPer }),
		sideCol("client MiB", "client MiB", "%.1f", func(s CellStats) SideStats { return s.Client }, func(s SideStats) float64 { return s.MiB }),
		sideCol("server cpu", "server cpu", "%.2f", func(s CellStats) SideStats { return s.Server }, func(s SideStats) float64 { return s.CPU }),
		sideCol("server cpu/unit", "server cpu/"+u.per, "%.3f", func(s CellStats) SideStats { return s.Server }, func(s SideStats) float64 { return s.CPUPer }),
		sideCol("server MiB", "server MiB", "%.1f", func(s CellStats) SideStats { return s.Server }, func(s SideStats) float64 { return s.MiB }),
		cost("target cpu", "target cpu", "", "%.2f", func(s CellStats) bool { return s.HasTarget }, func(s CellStats) float64 { return s.TargetCPU }),
		cost("cp cpu", "cp cpu", "", "%.2f", func(s CellStats) bool { return s.HasControlPlane }, func(s CellStats) float64 { return s.ControlPlaneCPU }),
		cost("node cpu", "node cpu", "", "%.2f", func(s CellStats) bool { return s.HasNode }, func(s CellStats) float64 { return s.NodeCPU }),
		column{key: "gen cpu", head: "gen cpu", get: func(s CellStats) string { return fmt.Sprintf("%.2f", s.GenCPU) }},
		column{key: "flags", head: "flags", first: true, left: true})
}

// messageColumns are the figures of streamed answers' messages (gRPC
// server streaming), empty on a cell without: their count and rate, the
// time to an answer's first message and the gap between two of one.
func messageColumns(u unit) []column {
	const group = "messages"
	col := func(key string, first bool, f func(*MessageStats) string) column {
		return column{key: key, head: key, group: group, first: first, get: func(s CellStats) string {
			if s.Messages == nil {
				return ""
			}
			return f(s.Messages)
		}}
	}
	lat := func(key string, first bool, gap bool, f func(*MessageStats) float64) column {
		return col(key, first, func(m *MessageStats) string {
			switch {
			case gap && !m.HasGap:
				return "—"
			case u.micros:
				return fmt.Sprintf("%.1f", f(m)/1e3)
			}
			return ms(f(m))
		})
	}
	return []column{
		col("msgs", false, func(m *MessageStats) string { return fmt.Sprintf("%.0f", m.Count) }),
		col("msgs/s", true, func(m *MessageStats) string { return fmt.Sprintf("%.0f", m.PerSec) }),
		lat("first p50", true, false, func(m *MessageStats) float64 { return m.FirstP50 }),
		lat("first p90", false, false, func(m *MessageStats) float64 { return m.FirstP90 }),
		lat("first p99", true, false, func(m *MessageStats) float64 { return m.FirstP99 }),
		lat("first max", false, false, func(m *MessageStats) float64 { return m.FirstMax }),
		lat("gap p50", false, true, func(m *MessageStats) float64 { return m.GapP50 }),
		lat("gap p90", false, true, func(m *MessageStats) float64 { return m.GapP90 }),
		lat("gap p99", true, true, func(m *MessageStats) float64 { return m.GapP99 }),
		lat("gap max", false, true, func(m *MessageStats) float64 { return m.GapMax }),
	}
}

// perHopColumns are the added figures of a path whose requests cross
// hops targets, each hop's share: (path − baseline)/hops for latency and
// the added CPU, the proxies' CPU over hops.
func perHopColumns(u unit, hops int) []column {
	n := float64(hops)
	const group = "added per hop"
	lat := func(key string, first bool, f func(CellStats) float64) column {
		return column{key: key, head: key, group: group, first: first, get: func(s CellStats) string {
			switch {
			case !s.Answered:
				return "—"
			case !s.HasAdded:
				return ""
			case u.micros:
				return fmt.Sprintf("%+.1f", f(s)/n/1e3)
			}
			return delta(f(s) / n)
		}}
	}
	if u.stream {
		return []column{{key: "+cpu/hop", head: "+cpu/" + u.per + "/hop", group: group, get: func(s CellStats) string {
			if !s.HasAddedCost {
				return ""
			}
			return fmt.Sprintf("%+.3f", s.AddCPUPerUnit/n)
		}}}
	}
	return []column{
		lat("+p50/hop", false, func(s CellStats) float64 { return s.AddP50 }),
		lat("+p99/hop", true, func(s CellStats) float64 { return s.AddP99 }),
		{key: "+cpu/hop", head: "+cpu/" + u.per + "/hop", group: group, get: func(s CellStats) string {
			if !s.HasAddedCost {
				return ""
			}
			return fmt.Sprintf("%+.3f", s.AddCPUPerUnit/n)
		}},
		{key: "proxy cpu/hop", head: "proxy cpu/hop", group: group, get: func(s CellStats) string {
			if !s.HasProxy {
				return ""
			}
			return fmt.Sprintf("%.2f", s.ProxyCPU/n)
		}},
	}
}

// belowZero marks an added latency below zero — a path through more than
// the baseline's, faster — with what it is: "contended" when the cell or
// its baseline was saturated (G, M), "within noise" when its interval
// spans 0 or there are too few repeats for one; bare only when its whole
// interval lies below 0, a real decrease.
func belowZero(text string, v float64, ci compare.Interval, s CellStats) string {
	switch {
	case v >= 0:
		return text
	case s.AddContended:
		return text + " contended"
	case ci.OK() && ci.Hi < 0:
		return text
	}
	return text + " within noise"
}

// withInterval is an added figure, and with repeats enough for one its
// interval: "+437us [+310us..+602us]".
func withInterval(v float64, ci compare.Interval, format func(float64) string) string {
	if !ci.OK() {
		return format(v)
	}
	return format(v) + " [" + format(ci.Lo) + ".." + format(ci.Hi) + "]"
}

func scaled(ci compare.Interval, by float64) compare.Interval {
	ci.Lo, ci.Hi = ci.Lo*by, ci.Hi*by
	return ci
}

// intervalLevels are the confidences of the added figures' intervals in
// stats ("90%"), for the legend.
func intervalLevels(stats []CellStats) []string {
	var out []string
	for _, s := range stats {
		if !s.HasAdded && !s.HasAddedCost {
			continue
		}
		for _, ci := range []compare.Interval{s.AddP50CI, s.AddP90CI, s.AddP99CI, s.AddP999CI, s.AddGbpsCI, s.AddCPUCI, s.AddMiBCI} {
			if l := fmt.Sprintf("%.0f%%", 100*ci.Level); ci.OK() && !contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// cells is a cell's row: step, path, figures and flags. A cell without
// figures says why in its throughput column ("failed", "interrupted")
// and leaves the rest empty: the reason goes in a note, where its length
// widens nothing.
func (col column) text(c *Cell, s CellStats) string {
	switch col.key {
	case "step":
		return c.Rung
	case "path":
		return c.Path
	case "flags":
		return s.Flags
	}
	switch {
	case !s.OK && col.key == "rate":
		return "failed"
	case s.Unmeasured && col.key == "rate":
		return "interrupted"
	case !s.OK || s.Unmeasured:
		return ""
	}
	return col.get(s)
}

// legend explains the columns shown (by key), for the lines under a table.
func legend(u unit, baseline string, shown []string, levels []string, hops int) string {
	has := func(key string) bool {
		for _, k := range shown {
			if k == key {
				return true
			}
		}
		return false
	}
	b := orNone(baseline)
	parts := []string{"medians over repeats"}
	switch {
	case u.stream && has("+p99"):
		parts = append(parts, "+Gbit/s: throughput over "+b+" at the same step")
	case has("+p99") || has("+p50"):
		parts = append(parts, "+pNN: latency added over "+b+" at the same step (one below 0 is within noise, or contended where G or M)")
	}
	if len(levels) > 0 && (has("+p50") || has("+p90") || has("+p99") || has("+p99.9") || has("+cpu") || has("+MiB")) {
		parts = append(parts, fmt.Sprintf("[lo..hi]: the added figure's %s interval over the repeats of the path and of %s (pairwise differences, distribution-free); one that spans 0 is within noise",
			strings.Join(levels, ", "), b))
	}
	if u.micros {
		parts = append(parts, "latency in µs")
	}
	per := "per 1000 " + u.rate
	if u.stream {
		per = "per Gbit/s"
	}
	switch {
	case has("+cpu") && has("+MiB"):
		parts = append(parts, fmt.Sprintf("+cpu/%s, +MiB: the CPU cores %s and the memory of the watched processes, over %s's", u.per, per, b))
	case has("+cpu"):
		parts = append(parts, fmt.Sprintf("+cpu/%s: the CPU cores %s of the watched processes, over %s's", u.per, per, b))
	case has("+MiB"):
		parts = append(parts, fmt.Sprintf("+MiB: the memory of the watched processes, over %s's", b))
	}
	if has("cpu/unit") {
		parts = append(parts, fmt.Sprintf("cpu/%s: the proxy's cores %s", u.per, per))
	}
	if has("+p50/hop") || has("+p99/hop") || has("+cpu/hop") || has("proxy cpu/hop") {
		parts = append(parts, fmt.Sprintf("/hop: each request crosses %d targets, each calling the next (%s too): the added figure, or the proxies' cpu, divided by %d", hops, b, hops))
	}
	if has("msgs/s") || has("first p50") || has("gap p99") {
		parts = append(parts, "messages: of the streamed answers, first: the time to an answer's first message, gap: between two messages of one answer (— no answer had two)")
	}
	if has("client cpu") || has("client cpu/unit") || has("client MiB") || has("server cpu") || has("server cpu/unit") || has("server MiB") {
		parts = append(parts, "client, server: the workers' sidecars and the target's, each counted once (— no sidecar on that side in this mode)")
	}
	if has("cp cpu") || has("node cpu") {
		parts = append(parts, "cp cpu: the mesh's control plane; node cpu: the nodes that ran the step's pods, whole (neither is in +cpu)")
	}
	if has("+cpu") || has("proxy cpu") || has("cpu/unit") || has("target cpu") || has("gen cpu") || has("client cpu") || has("server cpu") || has("cp cpu") || has("node cpu") {
		parts = append(parts, "cpu in cores")
	}
	if !u.stream {
		parts = append(parts, "— nothing answered to time")
	}
	if has("flags") {
		parts = append(parts, "flags: "+flagLegend())
	}
	return strings.Join(parts, "; ")
}
