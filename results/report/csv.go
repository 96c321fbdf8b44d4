package report

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"time"

	"loadgen/results"
)

// csvFixed are the columns every CSV row has, before the watched
// processes' columns; latencies are in microseconds.
var csvFixed = []string{
	"sweep", "step", "path", "rung", "connections", "threads", "payload", "protocol", "repeat",
	"rate_asked", "rate_achieved", "requests", "rps",
	"p50_us", "p75_us", "p90_us", "p95_us", "p99_us", "p99_9_us", "p99_99_us", "max_us",
	"errors_connect", "errors_read", "errors_write", "errors_timeout", "errors_status", "errors_protocol",
}

// CSV writes one row per step of every sweep (repeats are rows of their
// own; nothing is reduced). Each watched process set has four columns,
// cpu_mean.NAME and cpu_max.NAME in cores, mem_mean.NAME and mem_max.NAME
// in bytes, empty on steps that did not watch it; one side's proxies
// (client-proxy, server-proxy) two more, cpu_per_1k.NAME in cores and
// mib_per_1k.NAME per 1000 requests/s, and "none" in each where the side
// has no proxy in the run's mode. After the generator's
// and the machine's saturation come the proxy's worker count (ingress
// sizing), TLS and new connection per request. A failed step has its plan
// columns and its reason only. Where a sweep's requests crossed a chain
// of targets, a column hops says how many (1 elsewhere). Where answers
// were streams of messages (gRPC server streaming: Summary.Messages), the
// message columns (csvMessages) follow, empty on a step without. Last, a
// column per label key (--label), label.KEY, empty on a run without that
// label.
func CSV(w io.Writer, sweeps []*Sweep) error {
	chained := slices.ContainsFunc(sweeps, func(s *Sweep) bool { return s.Hops() > 1 })
	streamed := slices.ContainsFunc(sweeps, streamsMessages)
	var names []csvWatch // watched process sets, in order of appearance
	for _, s := range sweeps {
		for _, st := range s.Steps {
			for _, p := range st.Watched {
				if !slices.ContainsFunc(names, func(w csvWatch) bool { return w.name == p.Name }) {
					names = append(names, csvWatch{p.Name, p.Side != ""})
				}
			}
		}
	}
	head := append([]string{}, csvFixed...)
	for _, n := range names {
		head = append(head, "cpu_mean."+n.name, "cpu_max."+n.name, "mem_mean."+n.name, "mem_max."+n.name)
		if n.sided {
			head = append(head, "cpu_per_1k."+n.name, "mib_per_1k."+n.name)
		}
	}
	head = append(head, "generator_cpu", "generator_saturated", "machine_saturated", "workers", "tls", "new_conn", "failed")
	if chained {
		head = append(head, "hops")
	}
	if streamed {
		head = append(head, csvMessages...)
	}
	keys := csvLabelKeys(sweeps)
	for _, k := range keys {
		head = append(head, "label."+k)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, s := range sweeps {
		for _, st := range s.Steps {
			row := csvRow(s, st, names)
			if chained {
				row = append(row, itoa(s.Hops()))
			}
			if streamed {
				row = append(row, messageCells(st)...)
			}
			labels := s.Labels() // a step without a run: its sweep's
			if st.Run != nil {
				labels = st.Run.Labels
			}
			for _, k := range keys {
				row = append(row, labels[k])
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvMessages are the columns of streamed answers' messages: their
// count and rate over the window, the time to each answer's first message
// and the gap between two of one answer, in microseconds.
var csvMessages = []string{
	"messages", "messages_per_s",
	"first_message_p50_us", "first_message_p90_us", "first_message_p99_us", "first_message_max_us",
	"message_gap_p50_us", "message_gap_p90_us", "message_gap_p99_us", "message_gap_max_us",
}

// streamsMessages reports whether a step of s had streamed answers.
func streamsMessages(s *Sweep) bool {
	return slices.ContainsFunc(s.Steps, func(st *results.Step) bool { return st.Run != nil && st.Run.Summary.Messages != nil })
}

// messageCells are a step's csvMessages cells: empty without messages,
// the gap's empty when no answer had two.
func messageCells(st *results.Step) []string {
	cells := make([]string, len(csvMessages))
	if st.Run == nil || st.Run.Summary.Messages == nil {
		return cells
	}
	m := st.Run.Summary.Messages
	f := m.First
	copy(cells, []string{i64(m.Count), fnum(m.PerSec), micros(f.P50), micros(f.P90), micros(f.P99), micros(f.Max)})
	if g := m.Gap; g != nil {
		copy(cells[6:], []string{micros(g.P50), micros(g.P90), micros(g.P99), micros(g.Max)})
	}
	return cells
}

// csvLabelKeys are the label keys of every run, sorted: a column each,
// label.KEY, after the others, so that every other column keeps its
// place whether or not the runs were labelled.
func csvLabelKeys(sweeps []*Sweep) []string {
	var keys []string
	for _, s := range sweeps {
		for _, st := range s.Steps {
			if st.Run == nil {
				continue
			}
			for k := range st.Run.Labels {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// csvWatch is a watched process set's columns: four, six for one side's
// proxies.
type csvWatch struct {
	name  string
	sided bool
}

func (w csvWatch) columns() int {
	if w.sided {
		return 6
	}
	return 4
}

func csvRow(s *Sweep, st *results.Step, names []csvWatch) []string {
	row := []string{s.Name, st.ID, st.Path, st.Rung, itoa(st.Connections), itoa(st.Threads), itoa(st.Payload), "", itoa(st.Repeat), fnum(st.Rate)}
	run := st.Run
	if run == nil {
		row[7] = s.Protocol()
		n := len(csvFixed) + 3
		for _, w := range names {
			n += w.columns()
		}
		for len(row) < n {
			row = append(row, "")
		}
		return append(row, workers(st), "", "", oneLine(st.Failed, 1<<16))
	}
	sum := run.Summary
	row[7] = run.Config.Protocol
	achieved := ""
	if sum.Pacing != nil {
		achieved = fnum(sum.Pacing.Achieved)
	}
	l := sum.Latency
	e := sum.Errors
	row = append(row, achieved, strconv.FormatInt(sum.Requests, 10), fnum(sum.RPS),
		micros(l.P50), micros(l.P75), micros(l.P90), micros(l.P95), micros(l.P99), micros(l.P999), micros(l.P9999), micros(l.Max),
		i64(e.Connect), i64(e.Read), i64(e.Write), i64(e.Timeout), i64(e.Status), i64(e.Protocol))
	for _, n := range names {
		var p *results.ProcessCost
		for i := range st.Watched {
			if st.Watched[i].Name == n.name {
				p = &st.Watched[i]
			}
		}
		switch {
		case p == nil:
			row = append(row, make([]string, n.columns())...)
		case p.NoProxy != "":
			for range n.columns() {
				row = append(row, "none")
			}
		default:
			row = append(row, fnum(p.CPUMean), fnum(p.CPUMax), i64(p.MemMean), i64(p.MemMax))
			if n.sided {
				row = append(row, fnum(p.CPUPer1kRPS), fnum(p.MiBPer1kRPS))
			}
		}
	}
	return append(row, fnum(GeneratorCores(run)), strconv.FormatBool(run.Generator.Saturated),
		strconv.FormatBool(MachineSaturated(run)), workers(st), strconv.FormatBool(run.Config.TLS), strconv.FormatBool(run.Config.NewConn), oneLine(st.Failure(), 1<<16))
}

// workers is the step's proxy worker count (ingress sizing), empty when
// its path names none.
func workers(st *results.Step) string {
	if st.Workers == 0 {
		return ""
	}
	return itoa(st.Workers)
}

func itoa(n int) string     { return strconv.Itoa(n) }
func i64(n int64) string    { return strconv.FormatInt(n, 10) }
func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// micros prints a duration in microseconds, exactly (to the nanosecond).
func micros(d results.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64)
}
