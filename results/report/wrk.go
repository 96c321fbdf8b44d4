// Package report turns finished results into text for people and programs.
// Every reporter is a function of an immutable result and an io.Writer.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"loadgen/internal/units"
	"loadgen/results"
)

// WrkOptions select the optional parts of the wrk-style summary.
type WrkOptions struct {
	Latency bool // print the Latency Distribution (wrk --latency)
	// Spectrum prints wrk2's HdrHistogram Latency Distribution and its
	// Detailed Percentile spectrum (wrk2 -L).
	Spectrum bool
	// Uncorrected prints wrk2's blocks of the recorded latency, then of
	// the uncorrected one, from each request's actual send (wrk2 -U).
	Uncorrected bool
	// Percentiles are the percentiles of loadgen's own latency lines, in
	// percent (--percentiles); nil: results.DefaultPercentiles.
	Percentiles []float64
}

// Wrk writes run in wrk's summary layout, line for line, so scripts written
// for wrk parse it unchanged, then what wrk lacks below it.
func Wrk(w io.Writer, run *results.Run, opt WrkOptions) error {
	WrkHeader(w, run.Config)
	return WrkBody(w, run, opt)
}

// WrkBody is Wrk without the two header lines, which the CLI prints when the
// run starts.
func WrkBody(w io.Writer, run *results.Run, opt WrkOptions) error {
	p := &printer{w: w}
	s := run.Summary
	p.f("  Thread Stats%6s%11s%8s%12s\n", "Avg", "Stdev", "Max", "+/- Stdev")
	l := s.Latency
	p.f("    %-10s", "Latency")
	p.units(us(l.Mean), fmtTimeUS, 8)
	p.units(us(l.StdDev), fmtTimeUS, 10)
	p.units(us(l.Max), fmtTimeUS, 9)
	p.f("%8.2f%%\n", l.WithinStdDev)
	r := s.ThreadRPS
	p.f("    %-10s", "Req/Sec")
	p.units(r.Mean, fmtMetric, 8)
	p.units(r.StdDev, fmtMetric, 10)
	p.units(r.Max, fmtMetric, 9)
	p.f("%8.2f%%\n", r.WithinStdDev)
	if opt.Latency {
		p.f("  Latency Distribution\n")
		for _, q := range []struct {
			pct float64
			v   results.Duration
		}{{50, l.P50}, {75, l.P75}, {90, l.P90}, {99, l.P99}} {
			p.f("%7.0f%%", q.pct)
			p.units(us(q.v), fmtTimeUS, 10)
			p.f("\n")
		}
	}
	wrk2Blocks(p, run, opt)
	moved, how := s.BytesRead, "read"
	if SendsOnly(run.Config.Protocol) { // a sink answers nothing: what was sent
		moved, how = s.BytesWritten, "written"
	}
	p.f("  %d requests in %s, %sB %s\n", s.Requests, fmtTimeUS(us(s.Duration)), fmtBinary(float64(moved)), how)
	e := s.Errors
	if e.Socket() > 0 {
		p.f("  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect, e.Read, e.Write, e.Timeout)
	}
	if s.Non2xx3xx > 0 {
		p.f("  Non-2xx or 3xx responses: %d\n", s.Non2xx3xx)
	}
	p.f("Requests/sec: %9.2f\n", s.RPS)
	transfer := s.ReadPerSec
	if SendsOnly(run.Config.Protocol) { // a sink answers nothing: count what was sent
		transfer = s.WritePerSec
	}
	p.f("Transfer/sec: %10sB\n", fmtBinary(transfer))
	extras(p, run, opt)
	return p.err
}

// SendsOnly tells a protocol whose requests are sent and never answered
// (tcp-stream, udp-stream): its figure is what was sent.
func SendsOnly(protocol string) bool { return protocol == "tcp-stream" || protocol == "udp-stream" }

// DatagramsText says what a UDP run sent, what arrived and what was lost:
// "1000 sent, 990 received by the sink (7.92 Mbit/s, 3300/s), 10 lost (1.00%)".
func DatagramsText(g results.Datagrams, protocol string) string {
	got := fmt.Sprintf("%d answered in time", g.Received)
	if protocol == "udp-stream" {
		got = fmt.Sprintf("%d received by the sink", g.Received)
		if sec := g.Span.D().Seconds(); sec > 0 {
			got += fmt.Sprintf(" (%.2f Mbit/s, %.0f/s)", float64(g.ReceivedBytes)*8/1e6/sec, float64(g.Received)/sec)
		}
	}
	t := fmt.Sprintf("%d sent, %s, %d lost (%.2f%%)", g.Sent, got, g.Lost, g.LossPercent())
	if g.Unknown > 0 {
		t += fmt.Sprintf("; %d unknown: their receiver's count never came", g.Unknown)
	}
	return t + ", over the whole run, warm-up included"
}

// WrkHeader prints wrk's first two lines; the CLI prints them when the run
// starts, as wrk does.
func WrkHeader(w io.Writer, c results.Config) {
	if c.Duration == 0 && c.Requests > 0 { // -n alone: wrk has no such run
		fmt.Fprintf(w, "Running %d requests test @ %s\n", c.Requests, c.Target)
	} else {
		fmt.Fprintf(w, "Running %s test @ %s\n", units.FormatDuration(c.Duration.D()), c.Target) // as given: 10s, 2m30s
	}
	fmt.Fprintf(w, "  %d threads and %d connections\n", c.Threads, c.Connections)
}

// TextWidth is the columns the lines of loadgen's own text keep to (its
// warnings, the schedule): a long one wraps, indented under its start.
const TextWidth = 100

// extras is what wrk does not print: tail percentiles, corrected vs
// uncorrected latency, the schedule, connections, errors beyond wrk's
// classes, and the generator's own cost.
func extras(p *printer, run *results.Run, opt WrkOptions) {
	s := run.Summary
	p.f("--- loadgen ---\n")
	if len(run.Labels) > 0 {
		p.f("  Labels:                %s\n", strings.ReplaceAll(run.Labels.String(), ",", ", "))
	}
	l := s.Latency
	label := "Latency"
	if s.Uncorrected != nil {
		label = "Latency (corrected)"
	}
	ps := opt.Percentiles
	if ps == nil {
		ps = results.DefaultPercentiles
	}
	spectrum(p, label+":", l, run.Histograms.Latency, ps)
	if u := s.Uncorrected; u != nil {
		spectrum(p, "Latency (uncorrected):", *u, run.Histograms.Uncorrected, ps)
	}
	if f := s.Failed; f != nil && f.Count > 0 {
		p.f("  Latency counts %d requests: %d answered, %d failed (%s), each when it failed (a timeout at its timeout)\n",
			l.Count, l.Count-f.Count, f.Count, unanswered(s.Errors, f.Count))
		if a := s.Succeeded; a != nil && a.Count > 0 {
			p.f("  %-22s p50 %s  p99 %s  max %s;  failed: p50 %s  p99 %s  max %s\n", "Answered only:",
				Latency(a.P50), Latency(a.P99), Latency(a.Max), Latency(f.P50), Latency(f.P99), Latency(f.Max))
		}
	}
	if pc := s.Pacing; pc != nil {
		asked := fmt.Sprintf("%.2f/s", pc.Asked)
		if sch := run.Config.Schedule; sch != "" {
			asked = fmt.Sprintf("%s (%.0f/s at the start, %.0f/s at the end, mean %.2f/s)", sch, pc.StartRate, pc.EndRate, pc.Asked)
		}
		switch c := run.Config; {
		case c.Arrival != "" && c.JitterPct > 0:
			asked += fmt.Sprintf(" %s arrivals, jitter ±%g%%", c.Arrival, c.JitterPct)
		case c.Arrival != "":
			asked += " " + c.Arrival + " arrivals"
		}
		rate := fmt.Sprintf("Rate: asked %s, achieved %.2f/s;", asked, pc.Achieved)
		sent := fmt.Sprintf("%d sent, %d late (>%v), %d never sent, max lag %s", pc.Sent, pc.Late, results.LateAfter, pc.Unsent, Latency(pc.MaxLag))
		if pc.Slack > 0 {
			sent += fmt.Sprintf(" (slack %s)", Latency(pc.Slack))
		}
		if utf8.RuneCountInString(rate+sent) < TextWidth-2 {
			p.f("  %s %s\n", rate, sent)
		} else { // the schedule, then what was sent, each wrapped
			p.f("  %s        %s", Wrap(rate, TextWidth-2, "        "), Wrap(sent, TextWidth-8, "        "))
		}
	}
	stagesTable(p, s.Stages)
	if s.Outed() {
		p.f("  Outage: %s\n", s.OutageText())
	}
	c := s.Connections
	p.f("  Connections: %d established, %d failed", c.Established, c.Failed)
	if before := c.Failed - c.FailedMeasured; before > 0 && c.FailedMeasured > 0 {
		p.f(" (%d before the window, not connect errors)", before)
	}
	if cn := s.Connect; cn != nil {
		p.f("; connect p50 %s p99 %s max %s", Latency(cn.P50), Latency(cn.P99), Latency(cn.Max))
	}
	p.f("\n")
	if m := s.Messages; m != nil {
		messagesLine(p, m)
	}
	if run.Config.NewConn && s.Duration > 0 {
		kind := "Connections"
		if run.Config.TLS {
			kind = "TLS handshakes"
		}
		p.f("  %s/sec: %.2f (a new connection per request)\n", kind, float64(c.Measured)/s.Duration.D().Seconds())
	}
	if s.Errors.Protocol > 0 {
		p.f("  Protocol errors: %d\n", s.Errors.Protocol)
	}
	if len(s.Status) > 0 && !strings.HasPrefix(run.Config.Protocol, "tcp") && !strings.HasPrefix(run.Config.Protocol, "udp") {
		codes := make([]int, 0, len(s.Status))
		for code := range s.Status {
			codes = append(codes, code)
		}
		sort.Ints(codes)
		parts := make([]string, len(codes))
		grpc := strings.HasPrefix(run.Config.Protocol, "grpc")
		for i, code := range codes {
			name := fmt.Sprint(code)
			if grpc && code < len(grpcCodes) {
				name = grpcCodes[code]
			}
			parts[i] = fmt.Sprintf("%s: %d", name, s.Status[code])
		}
		label := "Status codes"
		if grpc {
			label = "gRPC status"
		}
		p.f("  %s: %s\n", label, strings.Join(parts, ", "))
		if n := Redirects(s); n > 0 && !grpc {
			how := ""
			if run.Config.OKStatus == "" {
				how = ": successes, as wrk counts them, though a redirect is not the page it points to (--ok-status 2xx makes them errors)"
			}
			p.f("  %s", Wrap(fmt.Sprintf("Redirects (3xx): %d of %d answers (%.1f%%)%s", n, s.Requests, 100*float64(n)/float64(max(1, s.Requests)), how), TextWidth-2, "    "))
		}
	}
	textByName(p, run) // a request mix's figures by name (byname.go)
	if s.BytesWritten > 0 && SendsOnly(run.Config.Protocol) {
		p.f("  Throughput: %.3f Gbit/s sent\n", s.Gbps())
	}
	if g := s.Datagrams; g != nil {
		p.f("  %s", Wrap("Datagrams: "+DatagramsText(*g, run.Config.Protocol), TextWidth-2, "    "))
	}
	if s.InFlight > 0 {
		p.f("  In flight when stopped (not counted): %d\n", s.InFlight)
	}
	p.f("  %s", Wrap("Generator: "+generatorLine(run), TextWidth-2, "    "))
	if run.Aborted != "" {
		p.f("  %s; figures cover %s.\n", upperFirst(run.Aborted), Latency(s.Duration))
	} else if run.Interrupted {
		p.f("  Interrupted: the run was stopped early; figures cover %s.\n", Latency(s.Duration))
	}
	for _, n := range run.Notes {
		p.f("  %s", Wrap("WARNING: "+n, TextWidth-2, "    "))
	}
	if MachineSaturated(run) {
		p.f("  %s", Wrap("WARNING: "+machineSaturated(run.Machine), TextWidth-2, "    "))
	}
}

// generatorLine is what the generator spent: its CPU time, with as many
// digits as a short run needs ("0.0041 CPU-s", never 0.00 beside a share
// that is not 0), its share of the CPUs it was allowed — the same CPU
// time over the window, or, over a window shorter than
// results.MinShareWindow, that it is too short to measure — and its peak
// RSS.
func generatorLine(run *results.Run) string {
	g := run.Generator
	share := fmt.Sprintf("%.0f%% of %.0f CPU(s)", 100*g.Utilization, g.CPUs)
	if w := run.Summary.Duration.D(); w < results.MinShareWindow {
		share = fmt.Sprintf("a %s window: too short to measure its share of %.0f CPU(s)", Latency(run.Summary.Duration), g.CPUs)
	}
	return fmt.Sprintf("%s CPU-s (user %s, sys %s), %s, peak RSS %s",
		cpuSeconds(g.CPUSeconds), cpuSeconds(g.UserSeconds), cpuSeconds(g.SysSeconds), share, fmtMiB(g.PeakRSS))
}

// cpuSeconds prints CPU time: two decimals, or two significant digits
// under 0.1 s (0.0041), so that a short run's time is not 0.00.
func cpuSeconds(s float64) string {
	if s == 0 || s >= 0.1 {
		return fmt.Sprintf("%.2f", s)
	}
	return strconv.FormatFloat(roundSig(s, 2), 'f', -1, 64)
}

// Redirects counts the answers of an HTTP run that were redirects (3xx).
func Redirects(s results.Summary) int64 {
	var n int64
	for code, k := range s.Status {
		if code >= 300 && code < 400 {
			n += k
		}
	}
	return n
}

// spectrum prints a latency's percentiles ps (in percent) and its max on
// one line, each from the summary or, when it lacks one, from the
// histogram enc ("?" when neither has it); or says there is nothing to
// show: "—", never 0.00us for no request.
func spectrum(p *printer, label string, l results.Latency, enc string, ps []float64) {
	if l.Count == 0 {
		p.f("  %-22s — (no request completed)\n", label)
		return
	}
	parts := make([]string, 0, len(ps)+1)
	for _, q := range ps {
		v := "?"
		if d, err := results.Percentile(l, enc, q); err == nil {
			v = Latency(d)
		}
		parts = append(parts, results.PercentileName(q)+" "+v)
	}
	parts = append(parts, "max "+Latency(l.Max))
	// One line, or, past loadgen's text width, several, each continued
	// under the first figure.
	line := fmt.Sprintf("  %-22s", label)
	for i, part := range parts {
		if i > 0 && utf8.RuneCountInString(line)+2+len(part) > TextWidth {
			p.f("%s\n", line)
			line = strings.Repeat(" ", 24) + " " + part
			continue
		}
		if i > 0 {
			line += " "
		}
		line += " " + part
	}
	p.f("%s\n", line)
}

// unanswered keeps the classes of requests that got no answer.
// unanswered are the error classes of the failed requests, of failed in
// all: connects that failed count when they were requests' own (a
// connection per request), not when they were reconnects between them.
func unanswered(e results.Errors, failed int64) results.Errors {
	connect := e.Connect
	e.Connect, e.Status = 0, 0
	if rest := failed - e.Total(); rest > 0 {
		e.Connect = min(connect, rest)
	}
	return e
}

// grpcCodes are gRPC's status code names, by number.
var grpcCodes = []string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

func (p *printer) f(format string, a ...any) { fmt.Fprintf(p, format, a...) }

// units prints a formatted number right-aligned the way wrk's print_units
// does: the pad shrinks by one for each trailing letter of the unit.
func (p *printer) units(n float64, format func(float64) string, width int) {
	msg := format(n)
	pad := 2
	if l := len(msg); l > 0 && unicode.IsLetter(rune(msg[l-1])) {
		pad--
		if l > 1 && unicode.IsLetter(rune(msg[l-2])) {
			pad--
		}
	}
	width -= pad
	if len(msg) > width {
		msg = msg[:width]
	}
	p.f("%*s%s", width, msg, "    "[:pad])
}

type unitScale struct {
	scale float64
	base  string
	names []string
}

var (
	timeUS = unitScale{1000, "us", []string{"ms", "s"}}
	timeS  = unitScale{60, "s", []string{"m", "h"}}
	binary = unitScale{1024, "", []string{"K", "M", "G", "T", "P"}}
	metric = unitScale{1000, "", []string{"k", "M", "G", "T", "P"}}
)

// format is wrk's format_units: divide while the amount is at least 85% of
// the next unit, stopping one short of the last unit name.
func (u unitScale) format(n float64, prec int) string {
	amt, unit := n, u.base
	for i := 0; i+1 < len(u.names) && amt >= u.scale*0.85; i++ {
		amt /= u.scale
		unit = u.names[i]
	}
	return fmt.Sprintf("%.*f%s", prec, amt, unit)
}

func fmtTimeUS(n float64) string {
	if n >= 1e6 {
		return timeS.format(n/1e6, 2)
	}
	return timeUS.format(n, 2)
}

func fmtBinary(n float64) string { return binary.format(n, 2) }
func fmtMetric(n float64) string { return metric.format(n, 2) }

func us(d results.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Latency prints a latency with three significant digits and a unit,
// rounded before the unit is chosen: 999.9us is 1.00ms, never 1000us.
func Latency(d results.Duration) string {
	v := roundSig(float64(d), 3)
	switch {
	case v >= float64(time.Second):
		return trim(v/1e9) + "s"
	case v >= float64(time.Millisecond):
		return trim(v/1e6) + "ms"
	default:
		return trim(v/1e3) + "us"
	}
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	scale := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

// trim prints v, already of three significant digits, with them: 123,
// 12.3, 1.23.
func trim(v float64) string {
	v = roundSig(v, 3)
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// messagesLine says what streamed answers carried: their messages, the
// time to each answer's first and between the next ones.
func messagesLine(p *printer, m *results.Messages) {
	p.f("  Messages: %d, %.2f/sec", m.Count, m.PerSec)
	if f := m.First; f.Count > 0 {
		p.f("; first p50 %s p99 %s max %s", Latency(f.P50), Latency(f.P99), Latency(f.Max))
	}
	if g := m.Gap; g != nil {
		p.f("; gap p50 %s p99 %s max %s", Latency(g.P50), Latency(g.P99), Latency(g.Max))
	}
	p.f("\n")
}

// stagesTable prints each stage of a staged schedule apart: when its
// measured intervals start, its asked and achieved rates, its latency.
func stagesTable(p *printer, stages []results.Stage) {
	if len(stages) == 0 {
		return
	}
	w := len("Stage")
	for _, st := range stages {
		w = max(w, len(st.Stage))
	}
	p.f("  %-*s %8s %10s %11s %9s %9s %9s %7s\n", w, "Stage", "From", "Asked/s", "Achieved/s", "p50", "p95", "p99", "Errors")
	for _, st := range stages {
		l := st.Latency
		asked := "-" // a closed loop's stage: connections, no rate asked
		if st.Asked > 0 {
			asked = fmt.Sprintf("%.1f", st.Asked)
		}
		p.f("  %-*s %7.1fs %10s %11.1f %9s %9s %9s %7d\n", w, st.Stage, st.Start.D().Seconds(), asked, st.Achieved,
			Latency(l.P50), Latency(l.P95), Latency(l.P99), st.Errors)
	}
}
