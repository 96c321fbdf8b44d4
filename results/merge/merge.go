// Package merge adds up runs of one load recorded by several generators
// (the workers of a distributed run, or machines run by hand) into the run
// one generator would have recorded: every histogram merged exactly, the
// counts summed, the rates summed (each run's over its own measured
// window), the summary rebuilt from the merged histograms. The runs must
// have been measured at the same time: see MinOverlap.
package merge

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// Worker is what one input run contributed: its share of the load and its
// own generator's cost, kept beside the merged run.
type Worker struct {
	Index       int              `json:"index"`
	Source      string           `json:"source,omitempty"` // a file, a pod
	Connections int              `json:"connections"`
	Threads     int              `json:"threads"`
	Rate        float64          `json:"rate,omitempty"`
	Requests    int64            `json:"requests"`
	RPS         float64          `json:"rps"`
	Start       time.Time        `json:"start"`
	End         time.Time        `json:"end"`
	Generator   results.Cost     `json:"generator"`
	Hostname    string           `json:"hostname,omitempty"`
	ClockOffset results.Duration `json:"clock_offset,omitempty"` // the reference clock minus this worker's, when measured
	OffsetError results.Duration `json:"clock_offset_error,omitempty"`
	Late        results.Duration `json:"late,omitempty"` // how long after the agreed start it began
}

// Input is one run to merge and where it came from (for messages).
type Input struct {
	Source string
	Run    *results.Run
}

// Runs merges the inputs, which must be runs of one load: the same
// configuration and load model (closed or open loop) but for each worker's
// share of connections, threads, rate and request count, the same request
// mix (names, weights, hosts: byname.go), each run once, measured at the
// same time (MinOverlap). It returns the merged run and one
// Worker per input.
func Runs(in []Input) (*results.Run, []Worker, error) { return RunsWith(in, Options{}) }

// Merged is what a merge makes: the merged run, one Worker per input,
// and the warnings its output must give, each also among the run's notes
// (the skew Options.AllowSkew let through), apart from the notes that
// only record (the workers' own notes, their saturation, labels left
// out).
type Merged struct {
	Run      *results.Run
	Workers  []Worker
	Warnings []string
}

// RunsWith is Merge without the warnings apart: the run and its workers.
func RunsWith(in []Input, o Options) (*results.Run, []Worker, error) {
	m, err := Merge(in, o)
	if err != nil {
		return nil, nil, err
	}
	return m.Run, m.Workers, nil
}

// Merge is Runs with options (Options.AllowSkew merges runs measured at
// skewed times), and the warnings apart.
//
// The merged rates (RPS, bytes per second, the open loop's achieved rate)
// are the sums of the runs' own, each over its own measured window, so a
// generator that started late does not dilute the others; the merged
// duration is the runs' mean window, and the merged run's start and end
// span them all.
func Merge(in []Input, o Options) (*Merged, error) {
	if len(in) == 0 {
		return nil, errors.New("nothing to merge")
	}
	for _, x := range in {
		if x.Run == nil {
			return nil, fmt.Errorf("%s: no run", x.Source)
		}
	}
	for _, check := range []func([]Input) error{sameLoad, sameMix, distinct} {
		if err := check(in); err != nil {
			return nil, err
		}
	}
	skewed, err := sameTime(in, o)
	if err != nil {
		return nil, err
	}
	hs, err := mergeHistograms(in)
	if err != nil {
		return nil, err
	}
	first := in[0].Run
	out := &results.Run{Schema: first.Schema, Tool: "loadgen", Config: first.Config, Env: first.Env,
		Start: first.Start, End: first.End}
	out.Config.Connections, out.Config.Threads, out.Config.Rate, out.Config.Requests = 0, 0, 0, 0
	var dropped []string
	ls := make([]results.Labels, len(in))
	for i, x := range in {
		ls[i] = x.Run.Labels
	}
	out.Labels, dropped = results.CommonLabels(ls)
	if len(dropped) > 0 {
		out.Notes = append(out.Notes, "labels not alike on every run, left out: "+strings.Join(dropped, ", "))
	}
	var workers []Worker
	var hosts []string
	var windows float64 // nanoseconds, summed without overflow
	var timed int
	s := &out.Summary
	for i, x := range in {
		r := x.Run
		c := r.Config
		out.Config.Connections += c.Connections
		out.Config.Threads += c.Threads
		out.Config.Rate += c.Rate
		out.Config.Requests += c.Requests
		if r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		if r.End.After(out.End) {
			out.End = r.End
		}
		addSummary(s, &r.Summary)
		addRates(s, r)
		if w := ownWindow(r); w > 0 {
			windows += float64(w)
			timed++
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Aborted != "" && out.Aborted == "" {
			out.Aborted = fmt.Sprintf("worker %d (%s): %s", i, x.Source, r.Aborted)
		}
		for _, n := range r.Notes {
			out.Notes = append(out.Notes, fmt.Sprintf("worker %d: %s", i, n))
		}
		if !slices.Contains(hosts, r.Env.Hostname) { // workers on machines of one name: it once
			hosts = append(hosts, r.Env.Hostname)
		}
		workers = append(workers, Worker{Index: i, Source: x.Source, Connections: c.Connections, Threads: c.Threads,
			Rate: c.Rate, Requests: r.Summary.Requests, RPS: ownRate(r), Start: r.Start, End: r.End,
			Generator: r.Generator, Hostname: r.Env.Hostname})
	}
	out.Env.Hostname = strings.Join(hosts, ",")
	if timed > 0 {
		s.Duration = results.Duration(windows / float64(timed))
	}
	s.ThreadRPS = spreads(in)
	out.Generator = generators(in)
	if err := hs.summarise(out); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		table
		to *[]results.NamedRequests
	}{{byName, &out.RequestsByName}, {byHost, &out.RequestsByHost}} {
		rows, note, err := named(t.table, in)
		if err != nil {
			return nil, err
		}
		*t.to = rows
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	out.Notes = append(out.Notes, fmt.Sprintf("merged from %d workers (histograms merged exactly; RPS the sum of their own rates, each over its own window)", len(in)))
	m := &Merged{Run: out}
	if skewed != "" {
		out.Notes = append(out.Notes, skewed)
		m.Warnings = append(m.Warnings, skewed)
	}
	var tlNote string
	if out.Timeline, tlNote = timelines(out, in); tlNote != "" {
		out.Notes = append(out.Notes, tlNote)
	}
	for _, w := range workers {
		if w.Generator.Saturated {
			out.Notes = append(out.Notes, fmt.Sprintf("worker %d (%s) was saturated: %.0f%% of its CPU; its share may measure the generator, not the target",
				w.Index, w.Source, 100*w.Generator.Utilization))
		}
	}
	m.Workers = workers
	return m, nil
}

// ownRate is r's request rate over its own measured window (for a run
// that records neither window nor duration, the RPS it says).
func ownRate(r *results.Run) float64 {
	if w := ownWindow(r); w > 0 {
		return float64(r.Summary.Requests) / w.Seconds()
	}
	return r.Summary.RPS
}

// addRates adds r's own rates into a: the merged rate is the sum of the
// generators' rates, each over the window it measured.
func addRates(a *results.Summary, r *results.Run) {
	b := &r.Summary
	w := ownWindow(r)
	a.RPS += ownRate(r)
	if m := b.Messages; m != nil && a.Messages != nil {
		if w <= 0 {
			a.Messages.PerSec += m.PerSec
		} else {
			a.Messages.PerSec += float64(m.Count) / w.Seconds()
		}
	}
	if w <= 0 { // no window: the rates it recorded
		a.ReadPerSec += b.ReadPerSec
		a.WritePerSec += b.WritePerSec
	} else {
		a.ReadPerSec += float64(b.BytesRead) / w.Seconds()
		a.WritePerSec += float64(b.BytesWritten) / w.Seconds()
	}
	if p := b.Pacing; p != nil && a.Pacing != nil {
		switch {
		case p.Achieved > 0: // over the time it sent, as it measured it
			a.Pacing.Achieved += p.Achieved
		case w > 0:
			a.Pacing.Achieved += float64(p.Sent) / w.Seconds()
		}
	}
}

// addSummary adds the counts of b into a. Figures that are not sums
// (latency, rates) are rebuilt afterwards.
func addSummary(a, b *results.Summary) {
	if m := b.Messages; m != nil { // the histograms make First and Gap
		if a.Messages == nil {
			a.Messages = &results.Messages{}
		}
		a.Messages.Count += m.Count
	}
	a.Requests += b.Requests
	a.BytesRead += b.BytesRead
	a.BytesWritten += b.BytesWritten
	a.Non2xx3xx += b.Non2xx3xx
	a.InFlight += b.InFlight
	a.Status = addStatus(a.Status, b.Status)
	addErrors(&a.Errors, b.Errors)
	a.Connections.Established += b.Connections.Established
	a.Connections.Failed += b.Connections.Failed
	a.Connections.Measured += b.Connections.Measured
	a.Connections.FailedMeasured += b.Connections.FailedMeasured
	if g := b.Datagrams; g != nil {
		if a.Datagrams == nil {
			a.Datagrams = &results.Datagrams{}
		}
		d := a.Datagrams
		d.Sent += g.Sent
		d.Received += g.Received
		d.ReceivedBytes += g.ReceivedBytes
		d.Lost += g.Lost
		d.Unknown += g.Unknown
		d.Span = max(d.Span, g.Span)
	}
	if p := b.Pacing; p != nil {
		if a.Pacing == nil {
			a.Pacing = &results.Pacing{}
		}
		a.Pacing.Asked += p.Asked
		a.Pacing.Sent += p.Sent
		a.Pacing.Late += p.Late
		a.Pacing.Unsent += p.Unsent
		a.Pacing.MaxLag = max(a.Pacing.MaxLag, p.MaxLag)
	}
}

// addErrors adds the counts of f into e.
func addErrors(e *results.Errors, f results.Errors) {
	e.Connect += f.Connect
	e.Read += f.Read
	e.Write += f.Write
	e.Timeout += f.Timeout
	e.Status += f.Status
	e.Protocol += f.Protocol
}

// spreads pools the workers' per-thread RPS samples: count, mean, standard
// deviation (sample, as the engine computes it) and max exactly. The share
// within one standard deviation cannot be recovered from the workers'
// figures: it is their mean weighted by samples, an estimate.
func spreads(in []Input) results.Spread {
	var out results.Spread
	var sum float64
	for _, x := range in {
		t := x.Run.Summary.ThreadRPS
		out.Samples += t.Samples
		sum += float64(t.Samples) * t.Mean
		out.Max = math.Max(out.Max, t.Max)
	}
	if out.Samples == 0 {
		return out
	}
	n := float64(out.Samples)
	out.Mean = sum / n
	var m2, within float64
	for _, x := range in {
		t := x.Run.Summary.ThreadRPS
		k := float64(t.Samples)
		if t.Samples > 1 {
			m2 += t.StdDev * t.StdDev * (k - 1)
		}
		d := t.Mean - out.Mean
		m2 += k * d * d
		within += k * t.WithinStdDev
	}
	if out.Samples > 1 {
		out.StdDev = math.Sqrt(m2 / (n - 1))
	}
	out.WithinStdDev = within / n
	return out
}

// generators adds up the workers' generator cost: CPU seconds and cores
// summed, utilization over each worker's cores and window, the largest
// worker's peak RSS, saturated if any worker was.
func generators(in []Input) results.Cost {
	var c results.Cost
	var allowed float64 // core-seconds
	for _, x := range in {
		g := x.Run.Generator
		c.CPUSeconds += g.CPUSeconds
		c.UserSeconds += g.UserSeconds
		c.SysSeconds += g.SysSeconds
		c.CPUs += g.CPUs
		c.PeakRSS = max(c.PeakRSS, g.PeakRSS)
		c.Saturated = c.Saturated || g.Saturated
		allowed += g.CPUs * ownWindow(x.Run).Seconds()
	}
	if allowed > 0 {
		c.Utilization = c.CPUSeconds / allowed
	}
	return c
}

// histograms are the merged histograms of every Encoded field; nil where
// no input had one.
type histograms struct {
	latency, uncorrected, connect, succeeded, failed *hist.Histogram
	msgFirst, msgGap                                 *hist.Histogram
}

// fields lists the Encoded fields with their merged histogram, so that
// decoding, merging and encoding treat them all alike.
func (h *histograms) fields(e *results.Encoded) []struct {
	name string
	enc  *string
	h    **hist.Histogram
} {
	return []struct {
		name string
		enc  *string
		h    **hist.Histogram
	}{
		{"latency", &e.Latency, &h.latency},
		{"uncorrected", &e.Uncorrected, &h.uncorrected},
		{"connect", &e.Connect, &h.connect},
		{"succeeded", &e.Succeeded, &h.succeeded},
		{"failed", &e.Failed, &h.failed},
		{"message_first", &e.MessageFirst, &h.msgFirst},
		{"message_gap", &e.MessageGap, &h.msgGap},
	}
}

func mergeHistograms(in []Input) (*histograms, error) {
	out := &histograms{}
	for _, x := range in {
		enc := x.Run.Histograms
		for _, f := range out.fields(&enc) {
			if *f.enc == "" {
				continue // absent: an empty histogram
			}
			h, err := hist.Decode(*f.enc)
			if err != nil {
				return nil, fmt.Errorf("%s: histograms.%s: %w", x.Source, f.name, err)
			}
			if *f.h == nil {
				*f.h = hist.New()
			}
			(*f.h).Merge(h)
		}
	}
	return out, nil
}

// summarise encodes the merged histograms into run and rebuilds the
// latency figures from them.
func (h *histograms) summarise(run *results.Run) error {
	for _, f := range h.fields(&run.Histograms) {
		if *f.h == nil {
			continue
		}
		s, err := (*f.h).Encode()
		if err != nil {
			return err
		}
		*f.enc = s
	}
	s := &run.Summary
	if h.latency != nil {
		s.Latency = results.Reduce(h.latency)
	}
	reduce := func(x *hist.Histogram) *results.Latency {
		if x == nil {
			return nil
		}
		l := results.Reduce(x)
		return &l
	}
	s.Uncorrected = reduce(h.uncorrected)
	s.Connect = reduce(h.connect)
	s.Succeeded = reduce(h.succeeded)
	if h.failed != nil && h.failed.Count() > 0 {
		s.Failed = reduce(h.failed)
	}
	if m := s.Messages; m != nil && h.msgFirst != nil {
		m.First = results.Reduce(h.msgFirst)
		m.Gap = reduce(h.msgGap)
	}
	return nil
}

// Sources lists the inputs' sources, sorted, for messages.
func Sources(in []Input) []string {
	var out []string
	for _, x := range in {
		out = append(out, x.Source)
	}
	sort.Strings(out)
	return out
}

// addStatus adds counts by status code into a, made when there is none.
func addStatus(a, b map[int]int64) map[int]int64 {
	for code, n := range b {
		if a == nil {
			a = map[int]int64{}
		}
		a[code] += n
	}
	return a
}
