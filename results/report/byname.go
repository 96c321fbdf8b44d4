package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"loadgen/results"
)

// A request mix's figures by name (loadgen run --targets): a row per
// name, in every report of a run — text, Markdown and HTML; and by host,
// a row per host, for a mix on several.

// byNameCols are the columns of the table by name.
var byNameCols = []string{"request", "weight", "share", "requests", "req/s", "p50", "p90", "p99", "max", "errors", "status"}

// byNameRows are the table's rows: each name's figures, as text.
func byNameRows(run *results.Run) [][]string { return namedRows(run.RequestsByName) }

// byHostCols are the columns of the table by host.
var byHostCols = append([]string{"host"}, byNameCols[1:]...)

// namedRows are the rows of a table by name or by host.
func namedRows(named []results.NamedRequests) [][]string {
	var rows [][]string
	for _, nr := range named {
		l := nr.Latency
		lat := func(d results.Duration) string {
			if l.Count == 0 {
				return "—"
			}
			return Latency(d)
		}
		rows = append(rows, []string{
			nr.Name,
			fmt.Sprintf("%d (%.1f%%)", nr.Weight, 100*nr.WeightShare),
			fmt.Sprintf("%.1f%%", 100*nr.Share),
			fmt.Sprint(nr.Requests),
			fmt.Sprintf("%.2f", nr.RPS),
			lat(l.P50), lat(l.P90), lat(l.P99), lat(l.Max),
			errorsCell(nr.Errors),
			statusCell(nr.Status),
		})
	}
	return rows
}

// errorsCell is a name's failed requests and error statuses: "0", or
// "12 (timeout 2, status 10)".
func errorsCell(e results.Errors) string {
	if e.Total() == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", e.Total(), e)
}

// statusCell lists a name's answers by status code: "200: 98, 503: 2".
func statusCell(status map[int]int64) string {
	codes := make([]int, 0, len(status))
	for code := range status {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = fmt.Sprintf("%d: %d", code, status[code])
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// The text's table keeps to fewer columns (Markdown and HTML have them
// all): those of textCols, a name cut at textName runes.
var textCols = []int{0, 1, 2, 3, 4, 5, 7, 9, 10} // request, weight, share, requests, req/s, p50, p99, errors, status

const textName = 30

// textByName prints the table by name under wrk's summary, its columns
// aligned, and the table by host of a mix on several.
func textByName(p *printer, run *results.Run) {
	textNamed(p, "  Requests by name (share: of the requests sent; latency: every request of the name):\n", byNameCols, run.RequestsByName)
	textNamed(p, "  Requests by host (connections: of -c; errors: with its failed connects):\n", byHostCols, hostsNamed(run.RequestsByHost))
}

// hostsNamed are hosts' figures with each one's connections in its name.
func hostsNamed(hosts []results.NamedRequests) []results.NamedRequests {
	out := slices.Clone(hosts)
	for i := range out {
		out[i].Name = fmt.Sprintf("%s (%d conn)", out[i].Name, out[i].Connections)
	}
	return out
}

// textNamed prints a table by name or by host, its columns aligned.
func textNamed(p *printer, title string, cols []string, named []results.NamedRequests) {
	if len(named) == 0 {
		return
	}
	var rows [][]string
	for k, r := range append([][]string{cols}, namedRows(named)...) {
		row := make([]string, len(textCols))
		for i, c := range textCols {
			row[i] = r[c]
		}
		if k > 0 {
			row[1] = fmt.Sprintf("%d (%.0f%%)", named[k-1].Weight, 100*named[k-1].WeightShare)
		}
		if name := []rune(row[0]); len(name) > textName && k > 0 && cols[0] == byNameCols[0] {
			row[0] = string(name[:textName-1]) + "…"
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(byNameCols))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	p.f("%s", title)
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("   ")
		for i, c := range r {
			pad := widths[i] - len([]rune(c))
			switch {
			case i == len(r)-1:
				b.WriteString("  " + c)
			case i == 0:
				b.WriteString(" " + c + strings.Repeat(" ", pad))
			default: // figures right-aligned
				b.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		p.f("%s\n", b.String())
	}
}

// markdownByName writes the table by name of a run.
func markdownByName(p *printer, run *results.Run) {
	if len(run.RequestsByName) == 0 {
		return
	}
	p.f("\nRequests by name (share: of the requests sent; latency: every request of the name):\n\n")
	mdRow(p, byNameCols...)
	p.f("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, r := range byNameRows(run) {
		mdRow(p, r...)
	}
	if len(run.RequestsByHost) == 0 {
		return
	}
	p.f("\nRequests by host (connections: of -c; errors: with its failed connects):\n\n")
	mdRow(p, byHostCols...)
	p.f("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, r := range namedRows(hostsNamed(run.RequestsByHost)) {
		mdRow(p, r...)
	}
}

// nameTable is the HTML table by name.
type nameTable struct {
	Cols []string
	Rows [][]string
}

func htmlByName(run *results.Run) *nameTable {
	if len(run.RequestsByName) == 0 {
		return nil
	}
	return microTable(byNameCols, byNameRows(run))
}

// htmlByHost is the HTML table by host of a mix on several, each host
// with its connections.
func htmlByHost(run *results.Run) *nameTable {
	if len(run.RequestsByHost) == 0 {
		return nil
	}
	return microTable(byHostCols, namedRows(hostsNamed(run.RequestsByHost)))
}
