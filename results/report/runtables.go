package report

import (
	"fmt"

	"loadgen/results"
)

// A run's tables beside its summary, in Markdown and HTML as in the text
// summary: the messages of streamed answers (gRPC server streaming) and
// each stage of a staged schedule (-R '0-2k/2s,2k/2s').

// messageCols are the columns of the messages table.
var messageCols = []string{"messages", "msgs/s", "first p50", "first p90", "first p99", "first max", "gap p50", "gap p90", "gap p99", "gap max"}

// messageRow is a run's messages: their count and rate, the time to each
// answer's first message and the gap between two of one answer ("—" when
// no answer had two).
func messageRow(m *results.Messages) []string {
	f := m.First
	row := []string{fmt.Sprint(m.Count), fmt.Sprintf("%.2f", m.PerSec), Latency(f.P50), Latency(f.P90), Latency(f.P99), Latency(f.Max), "—", "—", "—", "—"}
	if g := m.Gap; g != nil {
		copy(row[6:], []string{Latency(g.P50), Latency(g.P90), Latency(g.P99), Latency(g.Max)})
	}
	return row
}

// messagesNote says what the messages table's figures are.
const messagesNote = "first: the time to an answer's first message, from its intended start in open loop, from its send in closed loop; gap: between two messages of one answer"

// stageCols are the columns of the stages table.
var stageCols = []string{"stage", "from", "asked/s", "achieved/s", "requests", "p50", "p95", "p99", "errors"}

// stageRows are each stage's figures: when its measured intervals start,
// its asked rate ("-" for a closed loop's), achieved rate and latency.
func stageRows(stages []results.Stage) [][]string {
	var rows [][]string
	for _, st := range stages {
		asked := "-"
		if st.Asked > 0 {
			asked = fmt.Sprintf("%.1f", st.Asked)
		}
		l := st.Latency
		rows = append(rows, []string{st.Stage, fmt.Sprintf("%.1fs", st.Start.D().Seconds()), asked, fmt.Sprintf("%.1f", st.Achieved),
			fmt.Sprint(st.Requests), Latency(l.P50), Latency(l.P95), Latency(l.P99), fmt.Sprint(st.Errors)})
	}
	return rows
}

// markdownRunTables writes a run's messages and stages tables, those it has.
func markdownRunTables(p *printer, run *results.Run) {
	if m := run.Summary.Messages; m != nil {
		p.f("\nMessages of the streamed answers (%s):\n\n", messagesNote)
		mdRow(p, messageCols...)
		p.f("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		mdRow(p, messageRow(m)...)
	}
	if len(run.Summary.Stages) > 0 {
		p.f("\nStages (from: the stage's first measured interval; latency: every request that ended in it):\n\n")
		mdRow(p, stageCols...)
		p.f("|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range stageRows(run.Summary.Stages) {
			mdRow(p, r...)
		}
	}
}

// htmlMessages is the HTML table of a run's messages, nil without any.
func htmlMessages(run *results.Run) *nameTable {
	m := run.Summary.Messages
	if m == nil {
		return nil
	}
	return microTable(messageCols, [][]string{messageRow(m)})
}

// htmlStages is the HTML table of a run's stages, nil without any.
func htmlStages(run *results.Run) *nameTable {
	if len(run.Summary.Stages) == 0 {
		return nil
	}
	return microTable(stageCols, stageRows(run.Summary.Stages))
}

// microTable is an HTML table of these rows, microseconds as µs.
func microTable(cols []string, rows [][]string) *nameTable {
	for _, r := range rows {
		for i := range r {
			r[i] = micro(r[i])
		}
	}
	return &nameTable{Cols: cols, Rows: rows}
}
